(** * F1: the finite characterisation of SPE states (proofs/F1_finite_characterisation.md)

    On a machine with a finite state set, x is an SPE state iff every state is a
    successor of x: S ⊆ succ(x). The step "an injection S -> S is onto" is the
    pigeonhole principle, proved in Finite.v. The alphabet may be infinite.

    [F1_needs_finiteness] shows the finiteness premise cannot be dropped: on S = C = nat
    with h(s, c) = s + c, the state 1 is an SPE state (e(n) = n + 1 is an embedding onto
    succ(1)) but 0 is not a successor of 1. *)

From Coq Require Import List Lia.
Import ListNotations.
From AM Require Import Machine Finite Embedding Successors Generation.

Theorem F1_finite_characterisation {P C S} (X : machine P C S) (F : finite S) (x : S) :
  spe_state X x <-> (forall s, is_successor X x (state s)).
Proof.
  split.
  - (* an embedding of X into X is injective, so onto (pigeonhole): S = im(e) ⊆ succ(x) *)
    intros [e [He Hsucc]] s.
    destruct (injective_surjective F e (emb_injective _ _ _ He) s) as [s0 <-].
    apply Hsucc.
  - (* the identity is an embedding, and its image S lies inside succ(x) *)
    intro Hall. exists (fun s => s). split.
    + apply identity_embedding.
    + exact Hall.
Qed.

(** The corollary: an SPE state of a finite machine needs |S| ≤ |C|. *)
Corollary F1_states_at_most_completions {P C S} (X : machine P C S) (F : finite S)
    (cs : list C) (x : S) :
  (forall c, alphabet X c <-> In c cs) -> spe_state X x -> card F <= length cs.
Proof.
  intros Hcs Hspe.
  pose proof (proj1 (F1_finite_characterisation X F x) Hspe) as Hall.
  unfold card. etransitivity; [| apply (successor_states_length X x cs)].
  apply (pigeonhole S (fin_eq_dec F)); [apply fin_nodup |].
  intros s _. apply (proj2 (successor_states_alphabet X x cs Hcs s)). apply Hall.
Qed.

(** F1 is false without finiteness. *)
Definition shift : machine unit nat nat :=
  Machine (fun _ => tt) (fun s c => state (s + c)) total_alphabet.

Theorem F1_needs_finiteness :
  ~ (forall (X : machine unit nat nat) (x : nat),
       spe_state X x -> forall s, is_successor X x (state s)).
Proof.
  intro F1_everywhere.
  assert (Hspe : spe_state shift 1).
  { exists S. split.
    - split; simpl.
      + intros a b H. injection H. auto.
      + reflexivity.
      + auto.
      + intros s c _. reflexivity.
    - intro s'. exists s'. split; [exact I | reflexivity]. }
  destruct (F1_everywhere shift 1 Hspe 0) as [c [_ Hc]].
  simpl in Hc. discriminate.
Qed.
