(** * F2: the prompt obstruction (proofs/F2_prompt_obstruction.md)

    If (X, x) completion-generates X', every prompt of X' is the prompt of a successor
    state of x: p'(S') ⊆ { p(y) : y ∈ succ(x) ∩ S }. So a state of X' whose prompt no
    successor state of x carries refutes completion-generation; the invariant form
    replaces "no successor state carries it" by a proved relation between p(x) and the
    prompts of successor states. No finiteness is assumed anywhere. *)

From AM Require Import Machine Embedding Successors Generation.

Theorem F2_prompt_obstruction {P C S S'} (X : machine P C S) (x : S)
    (X' : machine P C S') :
  completion_generates X x X' ->
  forall s', exists y, is_successor X x (state y) /\ prompt X y = prompt X' s'.
Proof.
  intros [e [He Hsucc]] s'. exists (e s'). split.
  - apply Hsucc.
  - apply (emb_prompt _ _ _ He).
Qed.

(** The form the deciders use: one state whose prompt no successor state has refutes. *)
Corollary F2_refutes {P C S S'} (X : machine P C S) (x : S) (X' : machine P C S') (s' : S') :
  (forall y, is_successor X x (state y) -> prompt X y <> prompt X' s') ->
  ~ completion_generates X x X'.
Proof.
  intros Hnone Hcg.
  destruct (F2_prompt_obstruction X x X' Hcg s') as [y [Hy Hp]].
  exact (Hnone y Hy Hp).
Qed.

(** For SPE states (X' = X). *)
Corollary F2_not_spe {P C S} (X : machine P C S) (x s : S) :
  (forall y, is_successor X x (state y) -> prompt X y <> prompt X s) -> ~ spe_state X x.
Proof. apply F2_refutes. Qed.

(** The invariant form: I holds between p(x) and the prompt of every successor state of
    x; a state of X' whose prompt violates it refutes. *)
Corollary F2_invariant {P C S S'} (X : machine P C S) (x : S) (X' : machine P C S')
    (I : P -> P -> Prop) (s' : S') :
  (forall y, is_successor X x (state y) -> I (prompt X x) (prompt X y)) ->
  ~ I (prompt X x) (prompt X' s') ->
  ~ completion_generates X x X'.
Proof.
  intros Hinv Hviol. apply (F2_refutes X x X' s').
  intros y Hy Hp. apply Hviol. rewrite <- Hp. apply Hinv. exact Hy.
Qed.
