(** * F5: cardinality (proofs/F5_cardinality.md)

    If (X, x) completion-generates X', then |S'| ≤ |succ(x) ∩ S| ≤ |C|, and for every
    prompt π the states of X' with prompt π are no more than the successor states of x
    with prompt π. The target X' is finite; the successor states are counted by any
    list [L] that holds them all (a duplicate-free one gives exactly |succ(x) ∩ S|),
    which needs X's states to have a decidable equality (Python's ==). A constant
    h(x, ·) allows only one-state targets, with no finiteness at all. *)

From Coq Require Import List.
Import ListNotations.
From AM Require Import Machine Finite Embedding Successors Generation.

Section F5.
  Context {P C S S' : Type}.
  Variables (X : machine P C S) (X' : machine P C S') (x : S).
  Hypothesis eq_dec : forall a b : S, {a = b} + {a <> b}.

  (** The count behind every form: distinct states of X' (a list [l']) need as many
      successor states of x carrying their prompts (a list [L] holding them). *)
  Theorem F5_count :
    completion_generates X x X' ->
    forall (l' : list S') (L : list S), NoDup l' ->
    (forall s', In s' l' -> forall y, is_successor X x (state y) ->
                prompt X y = prompt X' s' -> In y L) ->
    length l' <= length L.
  Proof.
    intros [e [He Hsucc]] l' L Hnd HL.
    rewrite <- (map_length e l').
    apply (pigeonhole S eq_dec).
    - apply nodup_map_injective; [apply (emb_injective _ _ _ He) | exact Hnd].
    - intros y Hy. apply in_map_iff in Hy as [s' [<- Hs']].
      apply (HL s' Hs'); [apply Hsucc | apply (emb_prompt _ _ _ He)].
  Qed.

  (** |S'| ≤ |succ(x) ∩ S| *)
  Corollary F5_cardinality (F' : finite S') :
    completion_generates X x X' ->
    forall L : list S, (forall y, is_successor X x (state y) -> In y L) ->
    card F' <= length L.
  Proof.
    intros Hcg L HL. apply (F5_count Hcg (fin_enum F') L (fin_nodup F')).
    intros s' _ y Hy _. apply HL. exact Hy.
  Qed.

  (** |S'| ≤ |C| on a finite alphabet [cs] *)
  Corollary F5_at_most_completions (F' : finite S') (cs : list C) :
    (forall c, alphabet X c <-> In c cs) ->
    completion_generates X x X' -> card F' <= length cs.
  Proof.
    intros Hcs Hcg. etransitivity; [| apply (successor_states_length X x cs)].
    apply (F5_cardinality F' Hcg). intros y Hy.
    apply (proj2 (successor_states_alphabet X x cs Hcs y)). exact Hy.
  Qed.

  (** the sharper count, prompt by prompt *)
  Corollary F5_by_prompt (pi : P) (l' : list S') (L : list S) :
    completion_generates X x X' -> NoDup l' ->
    (forall s', In s' l' -> prompt X' s' = pi) ->
    (forall y, is_successor X x (state y) -> prompt X y = pi -> In y L) ->
    length l' <= length L.
  Proof.
    intros Hcg Hnd Hl' HL. apply (F5_count Hcg l' L Hnd).
    intros s' Hs' y Hy Hp. apply HL; [exact Hy |]. rewrite Hp. apply Hl'. exact Hs'.
  Qed.
End F5.

(** A constant h(x, ·) completion-generates only machines with at most one state (no
    finiteness, no decidable equality needed) ... *)
Theorem F5_constant {P C S S'} (X : machine P C S) (X' : machine P C S') (x : S) :
  (forall c1 c2, alphabet X c1 -> alphabet X c2 -> harness X x c1 = harness X x c2) ->
  completion_generates X x X' -> forall s1 s2 : S', s1 = s2.
Proof.
  intros Hconst [e [He Hsucc]] s1 s2.
  destruct (Hsucc s1) as [c1 [Hc1 H1]]. destruct (Hsucc s2) as [c2 [Hc2 H2]].
  apply (emb_injective _ _ _ He).
  rewrite (Hconst c1 c2 Hc1 Hc2) in H1. rewrite H1 in H2. injection H2. auto.
Qed.

(** ... so such an x is an SPE state only of a one-state machine. *)
Corollary F5_constant_spe {P C S} (X : machine P C S) (x : S) :
  (forall c1 c2, alphabet X c1 -> alphabet X c2 -> harness X x c1 = harness X x c2) ->
  spe_state X x -> forall s1 s2 : S, s1 = s2.
Proof. apply F5_constant. Qed.
