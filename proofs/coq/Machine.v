(** * Agentic machines (docs/tutorial/01_agentic_machines.md, section 1.1)

    An agentic machine over a prompt space [P] and a completion space [C] is a
    triple X = (S, p, h) with p : S -> P and h : S x C -> S ∪ {1, ↑}. The project
    fixes P = C = str; here [P] and [C] are any types, so every statement below holds
    for strings in particular.

    The state set S is the type [S]. Nothing here assumes it finite: a finite machine
    is a machine together with a [finite S] (Finite.v).

    Each machine also carries its completion alphabet, the completions it is defined on
    (a [TableMachine]'s completions; every string for a [FunctionMachine]). The tutorial's
    machines share one C; that is the case [alphabet = fun _ => True]. The alphabet only
    matters for embeddings between machines with different alphabets (the alphabet rule
    of proofs/empty_machine.md, Embedding.v). *)

(** The outcomes of one step: a state, the halting point 1, or the divergence point ↑.
    The sentinels are constructors, so they are never states. *)
Inductive outcome (S : Type) : Type :=
  | halt : outcome S
  | diverge : outcome S
  | state : S -> outcome S.

Arguments halt {S}.
Arguments diverge {S}.
Arguments state {S} _.

Record machine (P C S : Type) : Type := Machine {
  prompt : S -> P;
  harness : S -> C -> outcome S;
  alphabet : C -> Prop
}.

Arguments Machine {P C S} _ _ _.
Arguments prompt {P C S} _ _.
Arguments harness {P C S} _ _ _.
Arguments alphabet {P C S} _ _.

(** A map on states, extended to outcomes with the sentinels fixed: e(1) = 1, e(↑) = ↑. *)
Definition omap {S T : Type} (f : S -> T) (o : outcome S) : outcome T :=
  match o with
  | halt => halt
  | diverge => diverge
  | state s => state (f s)
  end.

Lemma omap_halt {S T} (f : S -> T) : omap f halt = halt.
Proof. reflexivity. Qed.

Lemma omap_diverge {S T} (f : S -> T) : omap f diverge = diverge.
Proof. reflexivity. Qed.

Lemma omap_id {S} (o : outcome S) : omap (fun s => s) o = o.
Proof. destruct o; reflexivity. Qed.

Lemma omap_compose {S T U} (f : S -> T) (g : T -> U) (o : outcome S) :
  omap g (omap f o) = omap (fun s => g (f s)) o.
Proof. destruct o; reflexivity. Qed.

(** An injective map stays injective on outcomes: it fixes the sentinels and sends
    states to states. *)
Lemma omap_injective {S T} (f : S -> T) :
  (forall a b, f a = f b -> a = b) ->
  forall o1 o2, omap f o1 = omap f o2 -> o1 = o2.
Proof.
  intros Hinj [| | a] [| | b]; simpl; intro H; try discriminate; try reflexivity.
  inversion H as [Hab]. rewrite (Hinj a b Hab). reflexivity.
Qed.

(** The state [y] whose image is an outcome [o], when [o] is a state. *)
Lemma omap_state {S T} (f : S -> T) (o : outcome S) (t : T) :
  omap f o = state t -> exists s, o = state s /\ f s = t.
Proof.
  destruct o as [| | s]; simpl; intro H; try discriminate.
  inversion H. exists s. split; reflexivity.
Qed.

(** Every machine over the whole completion space: the tutorial's setting. *)
Definition total_alphabet {C : Type} : C -> Prop := fun _ => True.
