(** A planted wrong statement: F1 without its finiteness premise. It must NOT compile:
    tests/test_coq.py checks that coqc rejects it, and with which message. The proof is
    F1's own (F1.v), and it breaks where F1 uses finiteness: the pigeonhole step
    [injective_surjective] needs a [finite S], and there is none to give. F1.v proves
    the statement false ([F1_needs_finiteness]). *)

(* expect: Cannot infer this placeholder of type "finite S" *)

From AM Require Import Machine Finite Embedding Successors Generation.

Theorem F1_without_finiteness {P C S} (X : machine P C S) (x : S) :
  spe_state X x -> forall s, is_successor X x (state s).
Proof.
  intros [e [He Hsucc]] s.
  destruct (injective_surjective _ e (emb_injective _ _ _ He) s) as [s0 <-].
  apply Hsucc.
Qed.
