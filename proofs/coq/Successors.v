(** * Successors (docs/tutorial/03_completion_generation_and_spe.md, section 3.1)

    succ(x) = { h(x, c) : c ∈ C }: every outcome one completion can lead to from x, a
    set of outcomes (states, 1, ↑). C is the machine's alphabet. *)

From Coq Require Import List Lia.
Import ListNotations.
From AM Require Import Machine.

Definition is_successor {P C S} (X : machine P C S) (x : S) (o : outcome S) : Prop :=
  exists c, alphabet X c /\ harness X x c = o.

(** On a finite alphabet listed as [cs], the successor states of x, one per completion
    at most (a completion that halts or diverges gives none). *)
Definition successor_states {P C S} (X : machine P C S) (x : S) (cs : list C) : list S :=
  flat_map (fun c => match harness X x c with state y => [y] | _ => [] end) cs.

Lemma successor_states_spec {P C S} (X : machine P C S) x cs y :
  In y (successor_states X x cs) <-> exists c, In c cs /\ harness X x c = state y.
Proof.
  unfold successor_states. rewrite in_flat_map. split.
  - intros [c [Hc Hy]]. exists c. split; [exact Hc |].
    destruct (harness X x c) as [| | z]; simpl in Hy; try contradiction.
    destruct Hy as [Hy | []]. subst. reflexivity.
  - intros [c [Hc Hy]]. exists c. split; [exact Hc |]. rewrite Hy. left. reflexivity.
Qed.

Lemma successor_states_length {P C S} (X : machine P C S) x cs :
  length (successor_states X x cs) <= length cs.
Proof.
  induction cs as [| c cs IH]; simpl; [lia |].
  rewrite app_length. destruct (harness X x c); simpl; lia.
Qed.

(** When [cs] lists the alphabet, its successor states are the states of succ(x). *)
Lemma successor_states_alphabet {P C S} (X : machine P C S) x cs :
  (forall c, alphabet X c <-> In c cs) ->
  forall y, In y (successor_states X x cs) <-> is_successor X x (state y).
Proof.
  intros Hcs y. rewrite successor_states_spec. unfold is_successor.
  split; intros [c [Hc Hy]]; exists c; split; try exact Hy; apply Hcs; exact Hc.
Qed.
