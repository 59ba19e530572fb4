(** * Finite state sets, and the pigeonhole principle

    A finite machine is a machine whose state type is listed: a duplicate-free list of
    every state, and a decidable equality (states of a [TableMachine] are Python values
    compared with ==). The pigeonhole principle is proved here from the definition of
    lists, not assumed: a duplicate-free list inside another is no longer than it, and an
    injective map from a finite type to itself is onto. *)

From Coq Require Import List Lia.
Import ListNotations.

Record finite (S : Type) : Type := Finite {
  fin_eq_dec : forall a b : S, {a = b} + {a <> b};
  fin_enum : list S;
  fin_nodup : NoDup fin_enum;
  fin_full : forall s, In s fin_enum
}.

Arguments fin_eq_dec {S} _ _ _.
Arguments fin_enum {S} _.
Arguments fin_nodup {S} _.
Arguments fin_full {S} _ _.

(** |S|: the number of states. *)
Definition card {S} (F : finite S) : nat := length (fin_enum F).

Section Pigeonhole.
  Variable A : Type.
  Hypothesis eq_dec : forall a b : A, {a = b} + {a <> b}.

  (** n pigeons in distinct holes need n holes. *)
  Lemma pigeonhole (l1 l2 : list A) :
    NoDup l1 -> incl l1 l2 -> length l1 <= length l2.
  Proof.
    revert l2. induction l1 as [| a l1 IH]; intros l2 Hnd Hincl; simpl.
    - lia.
    - inversion Hnd as [| ? ? Hnotin Hnd1]; subst.
      assert (Ha : In a l2) by (apply Hincl; left; reflexivity).
      assert (Hsub : incl l1 (remove eq_dec a l2)).
      { intros b Hb. apply in_in_remove.
        - intro Hba; subst b. contradiction.
        - apply Hincl. right. exact Hb. }
      pose proof (IH (remove eq_dec a l2) Hnd1 Hsub) as Hle.
      pose proof (remove_length_lt eq_dec l2 a Ha) as Hlt.
      lia.
  Qed.
End Pigeonhole.

Lemma nodup_map_injective {A B} (f : A -> B) (l : list A) :
  (forall a b, f a = f b -> a = b) -> NoDup l -> NoDup (map f l).
Proof.
  intros Hinj Hnd. induction Hnd as [| a l Hnotin Hnd IH]; simpl; constructor.
  - intro Hin. apply in_map_iff in Hin as [b [Hfb Hb]].
    apply Hinj in Hfb; subst b. contradiction.
  - exact IH.
Qed.

(** An injection of a finite type into itself is onto: if it missed a state [y], the
    images of all |S| states would sit among the |S| - 1 others. *)
Theorem injective_surjective {S} (F : finite S) (f : S -> S) :
  (forall a b, f a = f b -> a = b) -> forall y, exists x, f x = y.
Proof.
  intros Hinj y.
  destruct (in_dec (fin_eq_dec F) y (map f (fin_enum F))) as [Hin | Hout].
  - apply in_map_iff in Hin as [x [Hx _]]. exists x. exact Hx.
  - exfalso.
    assert (Hsub : incl (map f (fin_enum F)) (remove (fin_eq_dec F) y (fin_enum F))).
    { intros z Hz. apply in_in_remove.
      - intro Hzy; subst z. contradiction.
      - apply fin_full. }
    pose proof (pigeonhole S (fin_eq_dec F) _ _
                  (nodup_map_injective f _ Hinj (fin_nodup F)) Hsub) as Hle.
    rewrite map_length in Hle.
    pose proof (remove_length_lt (fin_eq_dec F) (fin_enum F) y (fin_full F y)) as Hlt.
    lia.
Qed.
