(** * F3: prompt-monotone machines have no SPE states (proofs/F3_prompt_monotone.md)

    Prompts here are sequences (a Python str is a sequence of characters: P = list A).
    X is prompt-monotone if every transition to a state strictly extends the prompt:
    p(s) is a proper prefix of p(h(s, c)). Then for every x, (X, x) completion-generates
    no machine X' with a state whose prompt is p(x); in particular x is not an SPE state.
    No finiteness is assumed. *)

From Coq Require Import List.
Import ListNotations.
From AM Require Import Machine Embedding Successors Generation F2.

Definition proper_prefix {A} (p q : list A) : Prop := exists r, r <> [] /\ q = p ++ r.

Definition prompt_monotone {A C S} (X : machine (list A) C S) : Prop :=
  forall s c y, alphabet X c -> harness X s c = state y ->
    proper_prefix (prompt X s) (prompt X y).

Lemma proper_prefix_neq {A} (p q : list A) : proper_prefix p q -> p <> q.
Proof.
  intros [r [Hr ->]] Heq. apply Hr.
  apply (app_inv_head p). rewrite app_nil_r. symmetry. exact Heq.
Qed.

Theorem F3_prompt_monotone {A C S S'} (X : machine (list A) C S) (X' : machine (list A) C S') :
  prompt_monotone X ->
  forall (x : S) (s' : S'), prompt X' s' = prompt X x -> ~ completion_generates X x X'.
Proof.
  intros Hmono x s' Hs'. apply (F2_refutes X x X' s').
  intros y [c [Hc Hh]] Hp. apply (proper_prefix_neq _ _ (Hmono x c y Hc Hh)).
  rewrite Hp, Hs'. reflexivity.
Qed.

Corollary F3_no_spe_states {A C S} (X : machine (list A) C S) :
  prompt_monotone X -> forall x, ~ spe_state X x.
Proof. intros Hmono x. apply (F3_prompt_monotone X X Hmono x x). reflexivity. Qed.
