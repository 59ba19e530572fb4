(** * Completion-generation and SPE states
    (docs/tutorial/03_completion_generation_and_spe.md, sections 3.2 and 3.3)

    (X, x) completion-generates X' iff there is an embedding e of X' into X with
    ∀ s' ∈ S' ∃ c ∈ C : h(x, c) = e(s'), that is e(S') ⊆ succ(x). The completion c is
    the loader of s'; x is an SPE state of X iff (X, x) completion-generates X.

    The toolkit's witness is the pair (embedding, loader), the loader a function from
    the target's states to completions: [generates_with_loader]. It implies the
    definition; the converse holds for finite targets without any axiom
    ([generates_loader_finite]); for infinite targets it is the axiom of choice, which
    nothing here assumes. *)

From Coq Require Import List.
Import ListNotations.
From AM Require Import Machine Finite Embedding Successors.

Definition completion_generates {P C S S'} (X : machine P C S) (x : S)
    (X' : machine P C S') : Prop :=
  exists e, embedding X' X e /\ forall s', is_successor X x (state (e s')).

Definition spe_state {P C S} (X : machine P C S) (x : S) : Prop :=
  completion_generates X x X.

Definition generates_with_loader {P C S S'} (X : machine P C S) (x : S)
    (X' : machine P C S') : Prop :=
  exists (e : S' -> S) (load : S' -> C),
    embedding X' X e /\
    forall s', alphabet X (load s') /\ harness X x (load s') = state (e s').

Lemma loader_generates {P C S S'} (X : machine P C S) x (X' : machine P C S') :
  generates_with_loader X x X' -> completion_generates X x X'.
Proof.
  intros [e [load [He Hl]]]. exists e. split; [exact He |].
  intro s'. exists (load s'). exact (Hl s').
Qed.

(** Choice over a list: finitely many existentials give a function. *)
Lemma list_choice {A B} (eq_dec : forall a b : A, {a = b} + {a <> b})
    (R : A -> B -> Prop) (d : A -> B) (l : list A) :
  (forall a, In a l -> exists b, R a b) -> exists f, forall a, In a l -> R a (f a).
Proof.
  induction l as [| a0 l IH]; intro H.
  - exists d. intros a [].
  - destruct (H a0 (or_introl eq_refl)) as [b0 Hb0].
    destruct IH as [f Hf].
    { intros a Ha. apply H. right. exact Ha. }
    exists (fun a => if eq_dec a a0 then b0 else f a).
    intros a Ha. destruct (eq_dec a a0) as [-> | Hne].
    + exact Hb0.
    + destruct Ha as [Ha | Ha]; [congruence | exact (Hf a Ha)].
Qed.

(** Choice over a finite type, no axiom needed. *)
Lemma finite_choice {A B} (F : finite A) (R : A -> B -> Prop) :
  (forall a, exists b, R a b) -> exists f : A -> B, forall a, R a (f a).
Proof.
  intro H. destruct (fin_enum F) as [| a0 rest] eqn:E.
  - (* no states: the empty function *)
    assert (Hnone : forall a : A, False).
    { intro a. pose proof (fin_full F a) as Ha. rewrite E in Ha. exact Ha. }
    exists (fun a => False_rect B (Hnone a)). intro a. destruct (Hnone a).
  - destruct (H a0) as [b0 _].
    destruct (list_choice (fin_eq_dec F) R (fun _ => b0) (fin_enum F)) as [f Hf].
    { intros a _. apply H. }
    exists f. intro a. apply Hf. apply fin_full.
Qed.

Lemma generates_loader_finite {P C S S'} (X : machine P C S) x (X' : machine P C S') :
  finite S' -> completion_generates X x X' -> generates_with_loader X x X'.
Proof.
  intros F [e [He Hs]].
  destruct (finite_choice F (fun s' c => alphabet X c /\ harness X x c = state (e s')) Hs)
    as [load Hload].
  exists e, load. split; [exact He | exact Hload].
Qed.
