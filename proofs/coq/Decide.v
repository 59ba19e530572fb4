(** * F1 as a decision procedure

    On a finite machine with a finite alphabet [cs], [spe_decide x] checks F1's
    right-hand side: every state is h(x, c) for some c in [cs]. [spe_decide_correct]
    proves it returns true exactly on the SPE states. tests/test_coq.py runs it with
    [vm_compute] on the 81 two-state machines of F1's executable check and compares
    each answer with the Python [is_spe_state]. *)

From Coq Require Import List Bool.
Import ListNotations.
From AM Require Import Machine Finite Successors Generation F1.

Section Decide.
  Context {P C S : Type}.
  Variables (X : machine P C S) (F : finite S) (cs : list C).

  Definition is_state (o : outcome S) (s : S) : bool :=
    match o with
    | state y => if fin_eq_dec F y s then true else false
    | _ => false
    end.

  Lemma is_state_true o s : is_state o s = true <-> o = state s.
  Proof.
    destruct o as [| | y]; simpl; split; intro H; try discriminate.
    - destruct (fin_eq_dec F y s) as [-> | _]; [reflexivity | discriminate].
    - injection H as ->. destruct (fin_eq_dec F s s); [reflexivity | contradiction].
  Qed.

  Definition spe_decide (x : S) : bool :=
    forallb (fun s => existsb (fun c => is_state (harness X x c) s) cs) (fin_enum F).

  Theorem spe_decide_correct (x : S) :
    (forall c, alphabet X c <-> In c cs) ->
    spe_decide x = true <-> spe_state X x.
  Proof.
    intro Hcs. rewrite (F1_finite_characterisation X F x).
    unfold spe_decide. rewrite forallb_forall. split.
    - intros H s. specialize (H s (fin_full F s)).
      apply existsb_exists in H as [c [Hc Hs]].
      exists c. split; [apply Hcs; exact Hc | apply is_state_true; exact Hs].
    - intros H s _. destruct (H s) as [c [Hc Hs]].
      apply existsb_exists. exists c. split; [apply Hcs; exact Hc | apply is_state_true; exact Hs].
  Qed.
End Decide.

(** Two states and two completions, as booleans (state 0 and completion "0" are
    [false]); a table gives h on (0, "0"), (0, "1"), (1, "0"), (1, "1"), in that order. *)
Definition bool_finite : finite bool.
Proof.
  refine (Finite bool bool_dec [false; true] _ _).
  - repeat constructor; simpl; intuition discriminate.
  - intros []; simpl; auto.
Defined.

Definition two_state (row : outcome bool * outcome bool * outcome bool * outcome bool) :
    machine unit bool bool :=
  let '(h00, h01, h10, h11) := row in
  Machine (fun _ => tt)
    (fun s c => match s, c with
                | false, false => h00 | false, true => h01
                | true, false => h10 | true, true => h11 end)
    (fun c => In c [false; true]).

(** The decision for both states of a table: (is 0 an SPE state, is 1). *)
Definition decide_two_state row : bool * bool :=
  (spe_decide (two_state row) bool_finite [false; true] false,
   spe_decide (two_state row) bool_finite [false; true] true).
