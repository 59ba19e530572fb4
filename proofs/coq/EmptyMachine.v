(** * The empty machine (proofs/empty_machine.md)

    E = (∅, p, h): a machine whose state type has no element. Every statement about an
    embedding is "for every s' ∈ S' ...", so with S' = ∅ it holds vacuously, whatever
    the alphabets: the empty map embeds E into every machine (1), it is the only map (2),
    every state of every machine completion-generates E (3), and nothing with a state
    embeds into E, which has no SPE states (4). *)

From AM Require Import Machine Embedding Successors Generation.

Section Empty.
  Context {P C SE S : Type}.
  Variable E : machine P C SE.
  Hypothesis no_state : SE -> False.

  Definition empty_map : SE -> S := fun s => False_rect S (no_state s).

  (** (1) whatever the alphabets of E and X *)
  Theorem empty_embedding (X : machine P C S) : embedding E X empty_map.
  Proof. split; intro s; destruct (no_state s). Qed.

  (** (2) every map from E's states is the empty map *)
  Theorem empty_embedding_unique (e : SE -> S) : forall s, e s = empty_map s.
  Proof. intro s. destruct (no_state s). Qed.

  (** (3) with the empty embedding and the empty loader *)
  Theorem empty_generated (X : machine P C S) (x : S) : completion_generates X x E.
  Proof.
    exists empty_map. split.
    - apply empty_embedding.
    - intro s. destruct (no_state s).
  Qed.

  (** (4) no machine with a state embeds into E ... *)
  Theorem no_embedding_into_empty (X : machine P C S) (s : S) (e : S -> SE) :
    ~ embedding X E e.
  Proof. intros _. exact (no_state (e s)). Qed.

  (** ... and E has no SPE states (there is no state to ask about). *)
  Theorem empty_no_spe_states : forall x : SE, ~ spe_state E x.
  Proof. intro x. destruct (no_state x). Qed.
End Empty.
