"""The CEK machine's fast path: :func:`run`, the rules of :func:`~agentic_machines.cek.machine.step`
taken with the state held in registers.

``cek/machine.py`` defines the machine: its states, one branch of ``step`` per rule, and
``run_by_steps``, a run that calls ``step`` once per transition. A run builds and hashes
a state node at every step that way; this module takes the same transitions without
building them, and is what the evaluator, the harness and the checks call. Its outcome
and step count are ``run_by_steps``'s: tests/test_cek_machine.py checks the two agree on
generated programs, and tests/test_cek_conformance.py runs every conformance case both
ways.

>>> from agentic_machines.cek.reader import parse
>>> from agentic_machines.cek.expr import compile_program
>>> from agentic_machines.cek.machine import HALT_K, Eval, run_by_steps
>>> start = Eval(compile_program(parse("(+ 1 (llm \\"q\\"))")), (), HALT_K)
>>> run(start, fuel=100) == run_by_steps(start, fuel=100)
True
"""

from __future__ import annotations

from typing import Any, cast

from ..errors import EvaluationError, MalformedProgram, ParseError, WrongType
from .expr import (
    EMPTY_PREFIX,
    UNPLANNED,
    And,
    App,
    Begin,
    Cond,
    Const,
    Define,
    DefineValue,
    EvalForm,
    If,
    Lambda,
    Letrec,
    LetStar,
    Llm,
    Or,
    PrimRef,
    Quote,
    Seq,
    Var,
)
from .machine import (
    AndK,
    ArgsK,
    BeginK,
    CondK,
    Cycle,
    Eval,
    EvalK,
    Failed,
    Halted,
    HaltK,
    IfK,
    LetStarK,
    LlmK,
    OrK,
    Ret,
    apply_procedure,
    atom_value,
    fit_arguments,
    out_of_fuel,
    program_value,
    run_by_steps,
    step,
)
from .syntax import FALSE, NIL, Node, deep_equal
from .values import Closure, Prim


def run(state: Node, *, fuel: int, detect_cycles: bool = True) -> tuple[Node, int]:
    """Run from ``state`` to the first ``Boundary``, ``Halted``, ``Failed`` or ``Cycle``.

    Returns ``(outcome, steps)``. A repeated state is detected exactly with Brent's
    algorithm (constant memory: one saved state). Raises :class:`Undecided` when
    ``fuel`` steps pass first.

    The run takes the transitions of :func:`step`, one per step, in the register form
    of :func:`_run_registers` (the same rules without a state node per step); its
    outcome and step count are those of :func:`run_by_steps`, which calls :func:`step`
    itself (tests/test_cek_machine.py checks the two agree on generated programs).

    >>> from agentic_machines.cek.reader import parse
    >>> from agentic_machines.cek.expr import compile_program
    >>> from agentic_machines.cek.machine import HALT_K
    >>> loop = compile_program(parse("(letrec ((f (lambda () (f)))) (f))"))
    >>> run(Eval(loop, (), HALT_K), fuel=1000)[0]
    Cycle(period=1)
    """
    t = type(state)
    if t is Eval or t is Ret:
        return _run_registers(cast(Eval | Ret, state), fuel, detect_cycles)
    return run_by_steps(state, fuel=fuel, detect_cycles=detect_cycles)


def _run_registers(state: Eval | Ret, fuel: int, detect_cycles: bool) -> tuple[Node, int]:
    """:func:`run_by_steps` with the state held in registers between steps.

    The state ``Eval(e, env, k)`` is kept as ``evaluating=True, e, env, k`` and
    ``Ret(v, k)`` as ``evaluating=False, v, k``; each pass of the loop is one rule of
    :func:`step` (same comment, same frames built), so the sequence of states is the
    same and only their ``Eval``/``Ret`` nodes are not built. Two rules share the
    application code at the end of the pass: ``(f a ...)`` starts it with no value yet,
    a value returned to an ``ArgsK`` frame resumes it. The atomic parts before the next
    compound part are read in one call (the ``Seq``'s plan, see ``expr.Seq.plan``)
    instead of one at a time.

    **Primitive calls in place.** When the rule about to run would push a frame ``F``
    (an ``IfK`` for an ``if``'s test, an ``ArgsK`` for an application's next part) and
    evaluate a primitive applied to atoms (``expr.primitive_call``), the next two
    states are ``<(p a ...), ρ', F κ>`` and ``<v, F κ>``: the loop computes ``v``
    directly and takes ``F``'s rule on it, counting the three steps, without building
    ``F``. It does so only when nothing can observe those two states: the fuel lasts
    past them and Brent's check saves no state at them (both: ``steps + 2 < event``),
    and the saved state's continuation depth differs from theirs (``depth(κ) + 1``), so
    neither can equal it; otherwise it takes the single steps. An error of the primitive
    is the error of the second step, as in :func:`step`.

    The bookkeeping after a step is one comparison with the next *event* (the step at
    which Brent's check saves a state, or the fuel ends) and the cycle check. Brent's
    cycle check compares a state with the saved one only when cheap necessary
    conditions hold (same kind, same continuation depth, equal expression hash and
    environment, or equal value); then it compares the continuations exactly, which
    hashes them (frames hash on first use, see :class:`Frame`). tests/test_cek_machine.py
    checks that this loop and :func:`run_by_steps` agree on generated programs, on every
    fuel up to a bound, and on loops whose cycles pass through primitive calls in place.
    """
    # The registers hold whatever node the rule at hand dispatched on (type(x) is C),
    # which mypy does not narrow through a saved type: they are typed Any.
    st: Any = state
    e: Any
    k: Any
    env: Any
    done: Any
    seq: Any
    if type(state) is Eval:
        evaluating, e, env, k, v = True, st.expr, st.env, st.kont, None
    else:
        evaluating, e, env, k, v = False, None, (), st.kont, st.value
    # Brent's saved state, in registers too, with its continuation depth and expression
    # hash for the cheap tests, and the step count at which it was saved (t_step): the
    # ``lam`` of run_by_steps is steps - t_step. The next state is saved at step
    # ``save_at`` (t_step + power). ``event`` is the first step count at which the loop
    # must save a state or stop for fuel: the only one the fast bookkeeping checks.
    # Without cycle detection: a depth no state has, and no save.
    t_eval, t_e, t_env, t_k, t_v = evaluating, e, env, k, v
    t_depth, te_hash = k.depth, e._hash if evaluating else 0
    t_step, power, save_at = 0, 1, 1
    if not detect_cycles:
        t_depth, save_at = -1, fuel + 1
    if fuel <= 0:
        raise out_of_fuel(fuel)
    event = min(save_at, fuel)
    steps = 0
    while True:
        try:
            seq = None
            if evaluating:
                te = type(e)
                if te is App or te is DefineValue:
                    # <(f a ...), ρ, κ>  ->  evaluate the parts left to right (below)  (a value define alike)
                    done, seq = (), e.seq
                elif te is If:
                    # <(if t a b), ρ, κ>  ->  <t, ρ|t, IfK(a b, ρ|ab, κ)>;  an atomic t on the spot
                    test, br = e.test, e.branches
                    if test.atomic:
                        benv = e.branches_sel(env)
                        if atom_value(test, e.test_sel(env)) is FALSE:
                            e, env = br.orelse, br.else_sel(benv)
                        else:
                            e, env = br.then, br.then_sel(benv)
                    else:
                        call = e.test_call
                        if call is UNPLANNED:
                            call = e.plan()
                        if call is not None and steps + 2 < event and k.depth + 1 != t_depth:
                            # a primitive test in place: <t, ρ|t, IfK(...)> -> <v, IfK(...)> -> branch
                            fn, get, consts = call
                            steps += 1
                            v = fn(*(get(env + consts) if consts else get(env)))
                            steps += 1
                            benv = e.branches_sel(env)
                            if v is FALSE:
                                e, env = br.orelse, br.else_sel(benv)
                            else:
                                e, env = br.then, br.then_sel(benv)
                        else:
                            k = IfK(br, e.branches_sel(env), k)
                            e, env = test, e.test_sel(env)
                elif te is Var:
                    # <x, ρ, κ>  ->  <ρ(x), κ>
                    v, evaluating = env[0], False
                elif te is Const:
                    # <c, ρ, κ>  ->  <c, κ>
                    v, evaluating = e.value, False
                elif te is PrimRef:
                    # <p, ρ, κ>  ->  <primitive p, κ>
                    v, evaluating = e.prim, False
                elif te is Lambda:
                    # <(lambda (x ...) b), ρ, κ>  ->  <closure(λ, ρ), κ>
                    v, evaluating = Closure(e.group, 0, env), False
                elif te is Quote:
                    # <'d, ρ, κ>  ->  <d, κ>
                    v, evaluating = e.value, False
                elif te is Begin:
                    # <(begin e1 e ...), ρ, κ>  ->  <e1, ρ|e1, BeginK((e ...), ..., κ)>
                    bseq = e.seq
                    if bseq.tail.head is None:
                        e = bseq.head
                    else:
                        k = BeginK(bseq.tail, bseq.tail_sel(env), k)
                        e, env = bseq.head, bseq.head_sel(env)
                elif te is Cond:
                    # <(cond (t e) c ...), ρ, κ>  ->  <t, ρ|t, CondK(e c ..., ρ|(e c ...), κ)>
                    k = CondK(e.clauses, e.clauses_sel(env), k)
                    e, env = e.test, e.test_sel(env)
                elif te is And or te is Or:
                    # <(and e1 e ...), ρ, κ>  ->  <e1, ρ|e1, AndK((e ...), ..., κ)>  (or: OrK)
                    bseq = e.seq
                    if bseq.tail.head is None:
                        e = bseq.head
                    else:
                        k = (AndK if te is And else OrK)(bseq.tail, bseq.tail_sel(env), k)
                        e, env = bseq.head, bseq.head_sel(env)
                elif te is LetStar:
                    # <(let* ((x e) b ...) body), ρ, κ>  ->  <e, ρ|e, LetStarK(x (let* (b ...) body), ρ|rest, κ)>;  an atom at once
                    init, rest = e.init, e.rest
                    if init is None:  # (let* () body): the body, in the same environment
                        e = rest.body
                    elif init.atomic:
                        x = atom_value(init, e.init_sel(env))
                        e, env = rest.body, rest.body_sel((x,) + e.rest_sel(env))
                    else:
                        k = LetStarK(rest, e.rest_sel(env), k)
                        e, env = init, e.init_sel(env)
                elif te is Letrec or te is Define:
                    # <(letrec ((f λ) ...) b), ρ, κ>  ->  <b, ρ|b + closures, κ>  (define: alike)
                    group = e.group
                    genv = e.group_sel(env)
                    vals = env + tuple(group.closure(j, genv) for j in e.rec) if e.rec else env
                    e, env = e.body, e.body_sel(vals)
                elif te is Llm:
                    # <(llm a), ρ, κ>  ->  <a, ρ, LlmK(κ)>
                    k = LlmK(k)
                    e = e.arg
                elif te is EvalForm:
                    # <(eval a), ρ, κ>  ->  <a, ρ, EvalK(κ)>
                    k = EvalK(k)
                    e = e.arg
                else:
                    raise WrongType(
                        f"step: {te.__name__} is not an expression node of the CEK; build expressions with compile_program"
                    )
            else:
                tk = type(k)
                if tk is ArgsK:
                    # <v, ArgsK(done, rest, ρ, κ)>  ->  continue the application with done + v (below)
                    done, seq, env, k = k.done + (v,), k.rest, k.env, k.next
                elif tk is IfK:
                    # <#f, IfK(a b, ρ, κ)>  ->  <b, ρ|b, κ>;   <v, IfK(a b, ρ, κ)>  ->  <a, ρ|a, κ>
                    br = k.branches
                    if v is FALSE:
                        e, env = br.orelse, br.else_sel(k.env)
                    else:
                        e, env = br.then, br.then_sel(k.env)
                    k, evaluating = k.next, True
                elif tk is BeginK or tk is AndK or tk is OrK:
                    # <v, BeginK((e ...), ρ, κ)>  ->  <e, ...>; <#f, AndK>  ->  <#f, κ> and
                    # <v, OrK>  ->  <v, κ> for v not #f; else AndK and OrK go on as BeginK
                    if tk is not BeginK and (v is FALSE) is (tk is AndK):
                        k = k.next
                    else:
                        rest = k.rest
                        if rest.tail.head is None:
                            e, env, k = rest.head, k.env, k.next
                        else:
                            e, env = rest.head, rest.head_sel(k.env)
                            k = tk(rest.tail, rest.tail_sel(k.env), k.next)
                        evaluating = True
                elif tk is CondK:
                    # <#f, CondK(e c ..., ρ, κ)>  ->  <(cond c ...), ρ|c, κ> or <nil, κ>;  <v, CondK>  ->  <e, ρ|e, κ> or <v, κ>
                    cl = k.clauses
                    if v is FALSE:
                        if cl.orelse is None:
                            v, k = NIL, k.next
                        else:
                            e, env, k, evaluating = cl.orelse, cl.else_sel(k.env), k.next, True
                    elif cl.then is not None:
                        e, env, k, evaluating = cl.then, cl.then_sel(k.env), k.next, True
                    else:
                        k = k.next
                elif tk is LetStarK:
                    # <v, LetStarK(x rest, ρ, κ)>  ->  <rest, ({x: v} + ρ)|rest, κ>
                    rest = k.rest
                    e, env, k, evaluating = rest.body, rest.body_sel((v,) + k.env), k.next, True
                elif tk is LlmK:
                    # <q, LlmK(κ)>  ->  boundary (llm q, κ)   when q is a string
                    return step(Ret(v, k)), steps + 1
                elif tk is EvalK:
                    # <text or datum, EvalK(κ)>  ->  <program, {}, κ>
                    e, env, k, evaluating = program_value(v), (), k.next, True
                elif tk is HaltK:
                    # <v, HALT_K>  ->  halted with v
                    return Halted(v), steps + 1
                else:
                    raise WrongType(
                        f"step: {tk.__name__} is not a continuation frame of the CEK; continuations are built by step and run"
                    )
            while seq is not None:
                # The application rule (as next_part), env aligned with seq.fv:
                #   atomic parts a ...:  done + values, read in one call
                #   compound part e:     <e, ρ|e, ArgsK(done, (e' ...), ρ|(e' ...), κ)>,
                #                        or its value in place when e is a primitive call
                #   no part left:        apply done[0] to done[1:] (as apply_procedure)
                pre = seq.pre
                if pre is UNPLANNED:
                    pre = seq.plan()
                if pre is None:  # a lambda among the atomic parts: one part at a time
                    done, env, seq = _atoms_one_by_one(done, seq, env)
                    stop, head_sel, tail_sel, call = seq, seq.head_sel, seq.tail_sel, None
                else:
                    if pre is not EMPTY_PREFIX:
                        consts = seq.pre_consts
                        done = done + (pre(env + consts) if consts else pre(env))
                    stop, head_sel, tail_sel = seq.stop, seq.stop_head_sel, seq.stop_tail_sel
                    call = seq.stop_call
                if stop.head is not None:
                    if call is not None and steps + 2 < event and k.depth + 1 != t_depth:
                        # a primitive part in place: <e, ρ|e, ArgsK(...)> -> <v, ArgsK(...)> -> continue
                        fn, get, consts = call
                        steps += 1
                        v = fn(*(get(env + consts) if consts else get(env)))
                        steps += 1
                        done, env, seq = done + (v,), tail_sel(env), stop.tail
                        continue
                    k = ArgsK(done, stop.tail, tail_sel(env), k)
                    e, env, evaluating = stop.head, head_sel(env), True
                    break
                f = done[0]
                tf = type(f)
                if tf is Prim:
                    # apply primitive p to args  ->  <p(args), κ>
                    v, evaluating = f.fn(*done[1:]), False
                elif tf is Closure:
                    # apply closure(group, i, ρ) to args  ->  <body_i, {params: args} + ρ + recursive members, κ>
                    group = f.group
                    plan = group.plans[f.index]
                    args = done[1:]
                    if len(args) != plan.arity:
                        args = fit_arguments(
                            plan, args
                        )  # the rest parameter's list, or the arity error
                    if plan.self_only:  # group.closure(i, f.env) equals f: see _recursive
                        vals = args + f.env + (f,)
                    elif plan.rec:
                        vals = args + f.env + _recursive(group, plan.rec, f)
                    else:
                        vals = args + f.env
                    e, env, evaluating = plan.body, plan.select(vals), True
                else:
                    apply_procedure(f, done[1:], k)  # raises: not a procedure
                break
        except (EvaluationError, MalformedProgram, ParseError) as err:
            return Failed(err), steps + 1
        steps += 1
        # Equal states have the same continuation depth and kind, and equal expressions
        # (same hash) and environments, or equal values: only a state that passes those
        # is compared in full (which hashes its continuation).
        if (
            k.depth == t_depth
            and evaluating is t_eval
            and (
                (e._hash == te_hash and env == t_env and (e is t_e or e == t_e))
                if evaluating
                else (v == t_v and deep_equal(v, t_v))
            )
            and k == t_k
        ):
            return Cycle(steps - t_step), steps
        if steps >= event:
            if steps >= fuel:
                raise out_of_fuel(fuel)
            # Brent: save this state; the next save comes twice as far on.
            t_eval, t_e, t_env, t_k, t_v = evaluating, e, env, k, v
            t_depth, te_hash = k.depth, e._hash if evaluating else 0
            power <<= 1
            t_step, save_at = steps, steps + power
            event = min(save_at, fuel)


def _atoms_one_by_one(done: tuple, seq: Any, env: tuple) -> tuple[tuple, tuple, Seq]:
    # The atomic parts one at a time (as next_part), up to the next compound part or the
    # end: (done, env aligned with the rest's fv, the rest). ``seq`` is a Seq, typed Any
    # as in next_part.
    while seq.head is not None and seq.head.atomic:
        done = done + (atom_value(seq.head, seq.head_sel(env)),)
        env = seq.tail_sel(env)
        seq = seq.tail
    return done, env, seq


def _recursive(group: Any, rec: tuple, f: Closure) -> tuple:
    # The closures of the members a body calls, as apply_procedure builds them; a member that
    # calls itself gets ``f`` back: group.closure(f.index, f.env) equals ``f`` field for
    # field (same group, index and environment), and the language has no identity test.
    genv = f.env
    out = []
    for j in rec:
        sub, i, select = group.members[j]
        if sub is group and i == f.index and select is None:
            out.append(f)
        else:
            out.append(Closure(sub, i, genv if select is None else select(genv)))
    return tuple(out)
