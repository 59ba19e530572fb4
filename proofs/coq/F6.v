(** * F6: commutation propagation (proofs/F6_commutation_propagation.md)

    Forcing: once e(s') = t is known, commutation forces e(h'(s', c)) = h(t, c) for every
    completion c of X' (both 1, both ↑, or both states, the second the image of the
    first). Determination: an embedding is fixed by its values on a set B of states from
    which every state is reachable. Both hold with no finiteness. The search built on
    them (find_embeddings: soundness, completeness, each embedding once) is Python code;
    its proof stays in the Markdown and its check in the tests. *)

From AM Require Import Machine Embedding.

Section F6.
  Context {P C S' S : Type}.
  Variables (X' : machine P C S') (X : machine P C S).

  Theorem F6_forcing (e : S' -> S) :
    embedding X' X e ->
    forall s' c, alphabet X' c ->
      (harness X' s' c = halt /\ harness X (e s') c = halt) \/
      (harness X' s' c = diverge /\ harness X (e s') c = diverge) \/
      (exists y', harness X' s' c = state y' /\ harness X (e s') c = state (e y')).
  Proof.
    intros He s' c Hc. rewrite (emb_commutes _ _ _ He s' c Hc).
    destruct (harness X' s' c) as [| | y']; simpl; auto.
    right. right. exists y'. split; reflexivity.
  Qed.

  (** the states reachable from B by transitions of X' on its alphabet *)
  Inductive reachable (B : S' -> Prop) : S' -> Prop :=
    | reach_base : forall b, B b -> reachable B b
    | reach_step : forall s c y, reachable B s -> alphabet X' c ->
                   harness X' s c = state y -> reachable B y.

  Theorem F6_determination (e1 e2 : S' -> S) (B : S' -> Prop) :
    embedding X' X e1 -> embedding X' X e2 ->
    (forall b, B b -> e1 b = e2 b) ->
    forall s, reachable B s -> e1 s = e2 s.
  Proof.
    intros H1 H2 HB s Hs. induction Hs as [b Hb | s c y _ IH Hc Hy].
    - apply HB. exact Hb.
    - assert (H : state (e1 y) = state (e2 y)).
      { change (state (e1 y)) with (omap e1 (state y)).
        change (state (e2 y)) with (omap e2 (state y)).
        rewrite <- Hy, <- (emb_commutes _ _ _ H1 s c Hc), <- (emb_commutes _ _ _ H2 s c Hc), IH.
        reflexivity. }
      injection H. auto.
  Qed.
End F6.
