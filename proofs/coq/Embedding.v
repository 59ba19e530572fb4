(** * Embeddings (docs/tutorial/02_embeddings.md, section 2.1)

    An embedding of X' = (S', p', h') into X = (S, p, h) is an injection e : S' -> S,
    extended by e(1) = 1 and e(↑) = ↑ ([omap], Machine.v), such that for every s' ∈ S'
    and every completion c: p(e(s')) = p'(s') and h(e(s'), c) = e(h'(s', c)).

    The alphabet rule (proofs/empty_machine.md): commutation is required on the
    source's alphabet C', every completion of which must be one of the target's; the
    target's other completions are not compared. Both conditions are stated "for every
    s' ∈ S' ...", so a source without states embeds whatever the alphabets. When both
    machines have the whole completion space as alphabet this is exactly the tutorial's
    definition ([embedding_total_alphabet]). *)

From AM Require Import Machine.

Record embedding {P C S' S : Type} (X' : machine P C S') (X : machine P C S)
    (e : S' -> S) : Prop := {
  emb_injective : forall a b, e a = e b -> a = b;
  emb_prompt : forall s', prompt X (e s') = prompt X' s';
  emb_alphabet : forall (s' : S') c, alphabet X' c -> alphabet X c;
  emb_commutes : forall s' c, alphabet X' c -> harness X (e s') c = omap e (harness X' s' c)
}.

(** Over one completion space (both alphabets total) the record says exactly what the
    tutorial says: an injection keeping prompts whose square commutes for every c. *)
Theorem embedding_total_alphabet {P C S' S} (p' : S' -> P) (h' : S' -> C -> outcome S')
    (p : S -> P) (h : S -> C -> outcome S) (e : S' -> S) :
  embedding (Machine p' h' total_alphabet) (Machine p h total_alphabet) e <->
  ((forall a b, e a = e b -> a = b) /\
   (forall s', p (e s') = p' s') /\
   (forall s' c, h (e s') c = omap e (h' s' c))).
Proof.
  split.
  - intros [Hi Hp _ Hc]. repeat split; auto.
    intros s' c. apply (Hc s' c). exact I.
  - intros [Hi [Hp Hc]]. split; simpl; auto.
Qed.

(** The alphabet rule, one way: a source with a state has its alphabet inside the
    target's. *)
Lemma embedding_alphabet_inside {P C S' S} (X' : machine P C S') (X : machine P C S) e :
  embedding X' X e -> forall (s' : S') c, alphabet X' c -> alphabet X c.
Proof. intros He s' c Hc. exact (emb_alphabet _ _ _ He s' c Hc). Qed.

(** The identity is an embedding of every machine into itself. *)
Theorem identity_embedding {P C S} (X : machine P C S) : embedding X X (fun s => s).
Proof.
  split.
  - auto.
  - reflexivity.
  - auto.
  - intros s c _. rewrite omap_id. reflexivity.
Qed.

(** Embeddings compose: if f embeds X'' into X' and e embeds X' into X, then e ∘ f
    embeds X'' into X (what [compose] in embedding.py relies on). *)
Theorem compose_embedding {P C S'' S' S} (X'' : machine P C S'') (X' : machine P C S')
    (X : machine P C S) (e : S' -> S) (f : S'' -> S') :
  embedding X' X e -> embedding X'' X' f -> embedding X'' X (fun s => e (f s)).
Proof.
  intros He Hf. split.
  - intros a b Hab. apply (emb_injective _ _ _ Hf). apply (emb_injective _ _ _ He). exact Hab.
  - intro s. rewrite (emb_prompt _ _ _ He). apply (emb_prompt _ _ _ Hf).
  - intros s c Hc. apply (emb_alphabet _ _ _ He (f s)). apply (emb_alphabet _ _ _ Hf s). exact Hc.
  - intros s c Hc.
    rewrite (emb_commutes _ _ _ He (f s) c (emb_alphabet _ _ _ Hf s c Hc)).
    rewrite (emb_commutes _ _ _ Hf s c Hc).
    apply omap_compose.
Qed.
