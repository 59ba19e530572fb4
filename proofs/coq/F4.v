(** * F4: invariance under embeddings (proofs/F4_invariance.md)

    Let e embed Y into X, y0 ∈ S_Y and x0 = e(y0). Then for every machine Z,
    (X, x0) completion-generates Z iff (Y, y0) does.

    With the alphabet rule (each machine its alphabet, Embedding.v), the direction
    X ⇒ Y needs X's loaders to be completions of Y: the statement is about machines over
    one alphabet (the embedding already puts Y's alphabet inside X's; the hypothesis
    [x_in_y] gives the other half). The direction Y ⇒ X needs nothing.

    Building the embedding of Z into Y picks a loader for every state of Z: that is
    free for a finite Z ([F4_invariance]) or a witness with its loader function
    ([F4_witness]); for an infinite Z given only "∀ z ∃ c", it is the axiom of choice,
    taken as a hypothesis in [F4_invariance_choice], never as an axiom. *)

From AM Require Import Machine Finite Embedding Successors Generation.

(** The axiom of choice for a relation between A and B (Coq's
    ChoiceFacts.FunctionalChoice_on), as a statement, not assumed. *)
Definition choice_on (A B : Type) : Prop :=
  forall R : A -> B -> Prop, (forall a, exists b, R a b) -> exists f, forall a, R a (f a).

Lemma finite_choice_on {A B} (F : finite A) : choice_on A B.
Proof. intros R H. exact (finite_choice F R H). Qed.

Section F4.
  Context {P C SX SY SZ : Type}.
  Variables (X : machine P C SX) (Y : machine P C SY) (Z : machine P C SZ).
  Variables (e : SY -> SX) (y0 : SY).
  Hypothesis He : embedding Y X e.

  (** (⇐) the composite e ∘ f, with the same loaders *)
  Theorem F4_from_source :
    completion_generates Y y0 Z -> completion_generates X (e y0) Z.
  Proof.
    intros [f [Hf Hsucc]]. exists (fun z => e (f z)). split.
    - apply (compose_embedding Z Y X e f He Hf).
    - intro z. destruct (Hsucc z) as [c [Hc Hy]]. exists c. split.
      + exact (emb_alphabet _ _ _ He y0 c Hc).
      + rewrite (emb_commutes _ _ _ He y0 c Hc), Hy. reflexivity.
  Qed.

  Hypothesis x_in_y : forall c, alphabet X c -> alphabet Y c.

  (** (⇒) f(z) := h_Y(y0, c_z), an embedding of Z into Y with the same loaders *)
  Theorem F4_witness :
    generates_with_loader X (e y0) Z -> generates_with_loader Y y0 Z.
  Proof.
    intros [g [load [Hg Hload]]].
    set (f := fun z => match harness Y y0 (load z) with state y => y | _ => y0 end).
    assert (Hf : forall z, harness Y y0 (load z) = state (f z) /\ e (f z) = g z).
    { intro z. destruct (Hload z) as [Hc Hx].
      rewrite (emb_commutes _ _ _ He y0 _ (x_in_y _ Hc)) in Hx.
      destruct (omap_state e _ _ Hx) as [y [Hy Hey]].
      unfold f. rewrite Hy. split; [reflexivity | exact Hey]. }
    exists f, load. split.
    - split.
      + intros a b Hab. apply (emb_injective _ _ _ Hg).
        rewrite <- (proj2 (Hf a)), <- (proj2 (Hf b)), Hab. reflexivity.
      + intro z. rewrite <- (emb_prompt _ _ _ He), (proj2 (Hf z)).
        apply (emb_prompt _ _ _ Hg).
      + intros z c Hc. apply x_in_y. exact (emb_alphabet _ _ _ Hg z c Hc).
      + intros z c Hc.
        assert (HcY : alphabet Y c) by (apply x_in_y; exact (emb_alphabet _ _ _ Hg z c Hc)).
        apply (omap_injective e (emb_injective _ _ _ He)).
        rewrite <- (emb_commutes _ _ _ He (f z) c HcY), (proj2 (Hf z)).
        rewrite (emb_commutes _ _ _ Hg z c Hc), omap_compose.
        destruct (harness Z z c) as [| | z']; simpl; try reflexivity.
        rewrite (proj2 (Hf z')). reflexivity.
    - intro z. split.
      + apply x_in_y. apply Hload.
      + apply Hf.
  Qed.

  (** F4 for every Z, given choice for Z's loaders *)
  Theorem F4_invariance_choice :
    choice_on SZ C ->
    (completion_generates X (e y0) Z <-> completion_generates Y y0 Z).
  Proof.
    intro choice. split.
    - intros [g [Hg Hsucc]].
      destruct (choice (fun z c => alphabet X c /\ harness X (e y0) c = state (g z)) Hsucc)
        as [load Hload].
      apply loader_generates, F4_witness. exists g, load. split; assumption.
    - apply F4_from_source.
  Qed.

  (** F4 for a finite Z, no axiom *)
  Theorem F4_invariance (FZ : finite SZ) :
    completion_generates X (e y0) Z <-> completion_generates Y y0 Z.
  Proof. apply F4_invariance_choice, finite_choice_on, FZ. Qed.
End F4.
