"""Deterministic toy environments for the architectures.

Every environment has the same small interface, the one REPL-Plan's ``act`` and
``get_obs`` need: ``step(action) -> str`` (the observation text), ``observation()``
(the current observation), ``done``, ``success``, ``reward`` and ``action_log`` (every
action string ever sent, in order). They are deterministic and copyable: harnesses that
are replayed (HarnessMachine) start each run from ``env.fresh()``, a deep copy.

* :class:`CountEnv`: ``step(x)`` says x; done after ``target`` actions; success when
  the numbers 1..target were said in order (REPL-Plan's Figure 4).
* :class:`Household`: an ALFWorld-like household: rooms, receptacles (some closed),
  objects; ``go to``, ``take``, ``put``, ``open``, ``close``, ``heat``, ``cool``,
  ``clean``, ``examine``, ``look``, ``inventory``; a goal check.
* :class:`Shop`: a WebShop-like shop: ``search[...]`` gives result pages, ``click[...]``
  opens product pages (long strings), chooses options and buys; the reward counts
  attribute, option and price matches. :func:`make_shop_task` generates tasks.

>>> env = CountEnv(2)
>>> env.step("1"), env.step("2"), env.done, env.success, env.action_log
('You said 1.', 'You said 2.', True, True, ['1', '2'])
"""

from __future__ import annotations

import copy
import random
import re
from dataclasses import dataclass
from typing import Any, Self

from ..errors import InvalidArgument

__all__ = [
    "Environment",
    "checked_environment",
    "CountEnv",
    "Household",
    "GoalItem",
    "default_household",
    "fresh_household",
    "Product",
    "ShopGoal",
    "Shop",
    "make_shop_task",
]


class Environment:
    """Base class: the interface every toy environment offers.

    Subclasses implement :meth:`_step` and :meth:`observation`; :meth:`step` logs the
    action first, so ``action_log`` holds every action exactly once, in order.

    >>> env = CountEnv(1); _ = env.step("1"); env.step("2"), env.action_log
    ('The episode is over; no action has any effect.', ['1', '2'])
    """

    instruction: str = ""

    def __init__(self) -> None:
        self.action_log: list[str] = []
        self.done = False

    def step(self, action: Any) -> str:
        """Perform ``action`` (converted to ``str``) and return the observation.

        >>> CountEnv(1).step(1)
        'You said 1.'
        """
        action = str(action)
        self.action_log.append(action)
        if self.done:
            return "The episode is over; no action has any effect."
        self._last = self._step(action)
        return self._last

    def observation(self) -> str:
        """The current observation: the last one returned, or the instruction at the start.

        >>> env = CountEnv(3); _ = env.step("1"); env.observation()
        'You said 1.'
        """
        return getattr(self, "_last", self.instruction)

    def fresh(self) -> Self:
        """A deep copy: the same environment, independent of this one.

        >>> a = CountEnv(); b = a.fresh(); _ = a.step("1"); b.action_log
        []
        """
        return copy.deepcopy(self)

    @property
    def success(self) -> bool:
        """True when the task is solved."""
        return self.reward >= 1.0

    @property
    def reward(self) -> float:
        """A score in [0, 1]."""
        return 1.0 if self.success else 0.0

    def _step(self, action: str) -> str:  # pragma: no cover - abstract
        raise NotImplementedError


# ---------------------------------------------------------------------------------
# counting
# ---------------------------------------------------------------------------------
class CountEnv(Environment):
    """Say the numbers 1..target, one per action (REPL-Plan's count-to-four).

    >>> env = CountEnv(4)
    >>> env.observation()
    'Count from 1 to 4: say one number per action.'
    >>> for x in "1243": _ = env.step(x)
    >>> env.done, env.success, env.reward
    (True, False, 0.5)
    """

    def __init__(self, target: int = 4) -> None:
        super().__init__()
        self.target = target
        self.instruction = f"Count from 1 to {target}: say one number per action."

    def _step(self, action: str) -> str:
        if len(self.action_log) >= self.target:
            self.done = True
        return f"You said {action}."

    @property
    def reward(self) -> float:
        want = [str(i) for i in range(1, self.target + 1)]
        right = sum(1 for a, b in zip(self.action_log, want) if a == b)
        return right / self.target

    @property
    def success(self) -> bool:
        return self.action_log == [str(i) for i in range(1, self.target + 1)]


# ---------------------------------------------------------------------------------
# household (ALFWorld-like)
# ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class GoalItem:
    """``count`` objects of type ``kind`` (e.g. ``"apple"``) in ``receptacle``, each with ``state`` if given.

    >>> GoalItem("apple", "sidetable 1", count=2).kind
    'apple'
    """

    kind: str
    receptacle: str
    state: str | None = None
    count: int = 1


_TOOLS = {"heat": ("microwave", "hot"), "cool": ("fridge", "cool"), "clean": ("sinkbasin", "clean")}
_OPENABLE = ("cabinet", "drawer", "fridge", "microwave", "safe", "box")


class Household(Environment):
    """A small ALFWorld-like household.

    ``layout`` maps a room to its receptacles, each with the objects it holds.
    Receptacles whose kind is openable (cabinet, drawer, fridge, microwave, safe, box)
    start closed unless listed in ``open_at_start``. The agent holds one object at a
    time. ``goal`` is a tuple of :class:`GoalItem`; the episode is done when it holds.

    >>> env = default_household()
    >>> env.step("go to countertop 1")
    'You arrive at countertop 1. On the countertop 1, you see a apple 1, and a mug 1.'
    >>> env.step("take apple 1 from countertop 1")
    'You pick up the apple 1 from the countertop 1.'
    >>> env.step("go to sidetable 1"); env.step("put apple 1 in/on sidetable 1")
    'You arrive at sidetable 1. On the sidetable 1, you see nothing.'
    'You put the apple 1 in/on the sidetable 1.'
    >>> env.done
    False
    """

    def __init__(
        self,
        layout: dict[str, dict[str, list[str]]],
        goal: tuple[GoalItem, ...],
        *,
        task: str = "",
        open_at_start: tuple[str, ...] = (),
    ) -> None:
        super().__init__()
        self.rooms = {room: list(recs) for room, recs in layout.items()}
        self.contents: dict[str, list[str]] = {}
        self.room_of: dict[str, str] = {}
        for room, recs in layout.items():
            for rec, objs in recs.items():
                self.contents[rec] = list(objs)
                self.room_of[rec] = room
        self.closed = {
            r for r in self.contents if r.split()[0] in _OPENABLE and r not in open_at_start
        }
        self.states: dict[str, set[str]] = {
            o: set() for objs in self.contents.values() for o in objs
        }
        self.goal = tuple(goal)
        self.room = next(iter(self.rooms))
        self.at: str | None = None
        self.holding: str | None = None
        self.instruction = (
            task
            or "Your task is to: "
            + "; ".join(
                f"put {g.count} {g.state + ' ' if g.state else ''}{g.kind} in/on {g.receptacle}"
                for g in self.goal
            )
            + "."
        )

    # -- observations --------------------------------------------------------------
    def _list(self, objs: list[str]) -> str:
        if not objs:
            return "nothing"
        items = [f"a {o}" for o in objs]
        return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f", and {items[-1]}"

    def _describe(self, rec: str) -> str:
        if rec in self.closed:
            return f"The {rec} is closed."
        if rec.split()[0] in _OPENABLE:
            return f"The {rec} is open. In it, you see {self._list(self.contents[rec])}."
        return f"On the {rec}, you see {self._list(self.contents[rec])}."

    def look(self) -> str:
        """The text of ``look``.

        >>> default_household().look()
        'You are in the kitchen. Looking quickly around you, you see a countertop 1, a cabinet 1, a cabinet 2, a fridge 1, a microwave 1, and a sinkbasin 1.'
        """
        where = f" You are facing the {self.at}." if self.at else ""
        return (
            f"You are in the {self.room}.{where} Looking quickly around you, you see "
            f"{self._list(self.rooms[self.room])}."
        )

    def goal_met(self) -> bool:
        """True when every goal item is satisfied.

        >>> default_household().goal_met()
        False
        """
        for g in self.goal:
            have = [
                o
                for o in self.contents.get(g.receptacle, [])
                if o.split()[0] == g.kind and (g.state is None or g.state in self.states.get(o, ()))
            ]
            if len(have) < g.count:
                return False
        return True

    @property
    def success(self) -> bool:
        return self.goal_met()

    @property
    def reward(self) -> float:
        return 1.0 if self.goal_met() else 0.0

    # -- actions -------------------------------------------------------------------
    def _step(self, action: str) -> str:
        obs = self._dispatch(" ".join(action.strip().split()))
        if self.goal_met():
            self.done = True
        return obs

    def _dispatch(self, a: str) -> str:
        if a == "look":
            return self.look()
        if a == "inventory":
            return (
                f"You are carrying: a {self.holding}."
                if self.holding
                else "You are not carrying anything."
            )
        if m := re.fullmatch(r"go to (.+)", a):
            rec = m.group(1)
            if rec in self.rooms:  # a room name
                self.room, self.at = rec, None
                return self.look()
            if rec not in self.contents:
                return "Nothing happens."
            self.at, self.room = rec, self.room_of[rec]
            return f"You arrive at {rec}. {self._describe(rec)}"
        if m := re.fullmatch(r"(open|close) (.+)", a):
            verb, rec = m.groups()
            if rec != self.at or rec.split()[0] not in _OPENABLE:
                return "Nothing happens."
            if verb == "open":
                self.closed.discard(rec)
                return f"You open the {rec}. {self._describe(rec)}"
            self.closed.add(rec)
            return f"You close the {rec}."
        if m := re.fullmatch(r"take (.+) from (.+)", a):
            obj, rec = m.groups()
            if (
                rec != self.at
                or rec in self.closed
                or obj not in self.contents[rec]
                or self.holding
            ):
                return "Nothing happens."
            self.contents[rec].remove(obj)
            self.holding = obj
            return f"You pick up the {obj} from the {rec}."
        if m := re.fullmatch(r"put (.+) (?:in/on|in|on) (.+)", a):
            obj, rec = m.groups()
            if obj != self.holding or rec != self.at or rec in self.closed:
                return "Nothing happens."
            self.contents[rec].append(obj)
            self.holding = None
            return f"You put the {obj} in/on the {rec}."
        if m := re.fullmatch(r"(heat|cool|clean) (.+) with (.+)", a):
            verb, obj, tool = m.groups()
            kind, state = _TOOLS[verb]
            if obj != self.holding or tool != self.at or tool.split()[0] != kind:
                return "Nothing happens."
            self.states.setdefault(obj, set()).add(state)
            if state in ("hot", "cool"):
                self.states[obj].discard("cool" if state == "hot" else "hot")
            return f"You {verb} the {obj} using the {tool}."
        if m := re.fullmatch(r"examine (.+)", a):
            thing = m.group(1)
            if thing in self.contents and thing == self.at:
                return self._describe(thing)
            if thing == self.holding:
                st = sorted(self.states.get(thing, ()))
                return f"This is a {' '.join(st) + ' ' if st else ''}{thing}."
            return "Nothing happens."
        return "Nothing happens."


def default_household() -> Household:
    """The default household: find two apples (one in a closed cabinet) and put them on the side table.

    >>> default_household().instruction
    'Your task is to: put 2 apple in/on sidetable 1.'
    """
    layout = {
        "kitchen": {
            "countertop 1": ["apple 1", "mug 1"],
            "cabinet 1": ["plate 1"],
            "cabinet 2": ["apple 2"],
            "fridge 1": ["potato 1"],
            "microwave 1": [],
            "sinkbasin 1": [],
        },
        "living room": {"sidetable 1": [], "sofa 1": ["pillow 1"]},
    }
    return Household(layout, (GoalItem("apple", "sidetable 1", count=2),))


def checked_environment(env: Any, kind: type[Environment] | None = None) -> Environment:
    """``env`` itself when it is an :class:`Environment` (of ``kind``, when given: a
    household architecture takes a :class:`Household`); :class:`InvalidArgument` otherwise.

    The architectures call ``step``, ``observation``, ``done``, ``success``, ``reward``,
    ``action_log`` and ``fresh`` on it: one documented form, checked where the machine is
    built, rather than guessing from which of those an object happens to have.

    >>> checked_environment(CountEnv(2)).step("1")
    'You said 1.'
    >>> checked_environment({"step": print})
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidArgument: env must be an Environment (CountEnv, Household, Shop or a subclass of agentic_machines.architectures.environments.Environment), got dict; to bring your own, subclass Environment and implement _step and observation
    >>> checked_environment(CountEnv(2), Household)
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidArgument: env must be a Household (this architecture's tasks are household tasks), got CountEnv; pass default_household() or a Household of your own
    """
    if not isinstance(env, Environment):
        raise InvalidArgument(
            "env must be an Environment (CountEnv, Household, Shop or a subclass of "
            "agentic_machines.architectures.environments.Environment), got "
            f"{type(env).__name__}; to bring your own, subclass Environment and implement "
            "_step and observation"
        )
    if kind is not None and not isinstance(env, kind):
        raise InvalidArgument(
            f"env must be a {kind.__name__} (this architecture's tasks are "
            f"{kind.__name__.lower()} tasks), got {type(env).__name__}; pass "
            f"default_{kind.__name__.lower()}() or a {kind.__name__} of your own"
        )
    return env


def fresh_household(env: Household | None) -> Household:
    """The household a run starts from: a fresh copy of ``env``, or a new
    :func:`default_household` when ``env`` is ``None``.

    A new household is unshared already, so it is not copied: a harness replayed from
    its start copies at every replayed step, and a copy's lines are counted (traced)
    against the step's line budget, which made it most of such a step's time.

    >>> a = default_household(); b = fresh_household(a); _ = a.step("look")
    >>> b.action_log, fresh_household(None).action_log
    ([], [])
    """
    if env is None:
        return default_household()
    checked_environment(env, Household)
    return env.fresh()


# ---------------------------------------------------------------------------------
# shop (WebShop-like)
# ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Product:
    """A product of the toy shop; ``options`` maps an option type to its values.

    >>> Product("B01", "Acme vegan shampoo", 9.5, "shampoo", ("vegan",), (("size", ("8 ounce",)),)).price
    9.5
    """

    asin: str
    title: str
    price: float
    category: str
    attributes: tuple[str, ...]
    options: tuple[tuple[str, tuple[str, ...]], ...] = ()
    description: str = ""


@dataclass(frozen=True)
class ShopGoal:
    """What the instruction asks for; the reward compares the bought product with it.

    >>> make_shop_task(0).goal.max_price > 0
    True
    """

    instruction: str
    category: str
    attributes: tuple[str, ...]
    options: tuple[tuple[str, str], ...]
    max_price: float


class Shop(Environment):
    """A WebShop-like shop with search, result pages, product pages, options and Buy Now.

    Pages are long strings. Buttons are written ``[label]``; ``click[label]`` presses
    one. The reward (WebShop-style) is the fraction of the goal's attributes, options
    and price bound that the bought product meets, halved for a wrong category.

    >>> env = make_shop_task(0)
    >>> env.instruction.startswith("Instruction: i am looking for")
    True
    >>> "[Search]" in env.observation()
    True
    >>> page = env.step("search[" + env.goal.category + "]")
    >>> "Page 1 (Total results:" in page and "[Back to Search]" in page
    True
    """

    def __init__(self, products: list[Product], goal: ShopGoal, *, page_size: int = 3) -> None:
        super().__init__()
        self.products = {p.asin: p for p in products}
        self.goal = goal
        self.page_size = page_size
        self.instruction = f"Instruction: {goal.instruction}"
        # ("home",), ("results", query, page) or ("item", asin, the page it came from)
        self.page: tuple[Any, ...] = ("home",)
        self.chosen: dict[str, str] = {}
        self.bought: tuple[Product, dict[str, str]] | None = None
        self._last = self._home()

    # -- pages ---------------------------------------------------------------------
    def _home(self) -> str:
        return f"WebShop\n{self.instruction}\n[Search]"

    def _results(self, query: str, page: int) -> str:
        hits = self.search(query)
        first = (page - 1) * self.page_size
        shown = hits[first : first + self.page_size]
        lines = [self.instruction, "[Back to Search]", f"Page {page} (Total results: {len(hits)})"]
        if page > 1:
            lines.append("[< Prev]")
        if first + self.page_size < len(hits):
            lines.append("[Next >]")
        for p in shown:
            lines += [f"[{p.asin}]", p.title, f"${p.price:.2f}"]
        return "\n".join(lines)

    def _item(self, asin: str) -> str:
        p = self.products[asin]
        lines = [self.instruction, "[Back to Search]", "[< Prev]"]
        for kind, values in p.options:
            marks = " ".join(f"[{v}]" + ("*" if self.chosen.get(kind) == v else "") for v in values)
            lines.append(f"{kind}: {marks}")
        lines += [
            p.title,
            f"Price: ${p.price:.2f}",
            "Rating: N.A.",
            f"Features: {', '.join(p.attributes)}",
            f"Description: {p.description}",
            "[Buy Now]",
        ]
        return "\n".join(lines)

    def search(self, query: str) -> list[Product]:
        """Products ranked by how many query words their title and features contain.

        >>> env = make_shop_task(0)
        >>> all(env.goal.category in p.title for p in env.search(env.goal.category)), env.search("xyzzy")
        (True, [])
        """
        words = set(re.findall(r"[a-z0-9]+", query.lower()))
        scored = []
        for p in self.products.values():
            text = set(
                re.findall(r"[a-z0-9]+", f"{p.title} {' '.join(p.attributes)} {p.category}".lower())
            )
            score = len(words & text)
            if score:
                scored.append((-score, p.asin, p))
        return [p for _, _, p in sorted(scored)]

    # -- actions -------------------------------------------------------------------
    def _step(self, action: str) -> str:
        a = action.strip()
        if m := re.fullmatch(r"search\[(.*)\]", a, re.S):
            self.page = ("results", m.group(1), 1)
            self.chosen = {}
            return self._results(m.group(1), 1)
        m = re.fullmatch(r"click\[(.*)\]", a, re.S)
        if not m:
            return "Invalid action!"
        label = m.group(1).strip()
        kind = self.page[0]
        if label == "Back to Search" and kind != "home":
            self.page = ("home",)
            return self._home()
        if kind == "results":
            _, query, page = self.page
            if label == "Next >" and page * self.page_size < len(self.search(query)):
                self.page = ("results", query, page + 1)
                return self._results(query, page + 1)
            if label == "< Prev" and page > 1:
                self.page = ("results", query, page - 1)
                return self._results(query, page - 1)
            if label in self.products:
                self.page = ("item", label, self.page)
                self.chosen = {}
                return self._item(label)
        if kind == "item":
            _, asin, back = self.page
            product = self.products[asin]
            if label == "< Prev":
                self.page = back
                return self._results(back[1], back[2])
            if label == "Buy Now":
                self.bought = (product, dict(self.chosen))
                self.done = True
                self.page = ("done",)
                return f"Thank you for shopping with us! Your score: {self.reward:.2f}"
            for opt, values in product.options:
                if label in values:
                    self.chosen[opt] = label
                    return self._item(asin)
        return "Invalid action!"

    @property
    def reward(self) -> float:
        if self.bought is None:
            return 0.0
        p, chosen = self.bought
        g = self.goal
        hits = sum(1 for a in g.attributes if a in p.attributes)
        hits += sum(1 for k, v in g.options if chosen.get(k) == v)
        hits += 1 if p.price <= g.max_price else 0
        score = hits / (len(g.attributes) + len(g.options) + 1)
        return score if p.category == g.category else score / 2

    @property
    def success(self) -> bool:
        return self.reward >= 1.0


_CATALOG = {
    "t-shirt": (
        ["cotton", "slim fit", "short sleeve", "machine wash", "v-neck", "moisture wicking"],
        {"size": ["small", "medium", "large"], "color": ["black", "white", "navy"]},
    ),
    "dress": (
        ["long sleeve", "floral print", "midi", "pockets", "elastic waist", "chiffon"],
        {"size": ["small", "medium", "large"], "color": ["red", "blue", "green"]},
    ),
    "shampoo": (
        ["sulfate free", "paraben free", "for dry hair", "coconut oil", "vegan", "travel size"],
        {"size": ["8 ounce", "16 ounce"]},
    ),
    "headphones": (
        ["wireless", "noise cancelling", "over ear", "bluetooth", "long battery life", "foldable"],
        {"color": ["black", "silver", "blue"]},
    ),
    "backpack": (
        [
            "water resistant",
            "laptop sleeve",
            "lightweight",
            "usb charging port",
            "anti theft",
            "large capacity",
        ],
        {"color": ["black", "grey", "green"]},
    ),
}

_FILLER = (
    "This item is made with care and tested for everyday use. It ships in recyclable "
    "packaging. Customers say it is good value. Please check the size chart and the "
    "option list before you buy; colours may look slightly different on screens. "
)


def make_shop_task(seed: int, *, n_products: int = 12, page_size: int = 3) -> Shop:
    """A generated shop task: a catalogue with one exact match and near misses.

    Deterministic in ``seed``. Distractors miss one attribute, cost too much, or lack
    the wanted option value; the exact match is not always ranked first.

    >>> a, b = make_shop_task(3), make_shop_task(3)
    >>> a.instruction == b.instruction and list(a.products) == list(b.products)
    True
    """
    rng = random.Random(seed)
    category = rng.choice(sorted(_CATALOG))
    attrs, options = _CATALOG[category]
    want_attrs = tuple(sorted(rng.sample(attrs, 2)))
    want_opts = tuple((k, rng.choice(v)) for k, v in sorted(options.items()))
    max_price = float(rng.choice([30, 40, 50, 60]))
    opt_text = " and ".join(f"{v} {k}" for k, v in want_opts)
    instruction = (
        f"i am looking for a {' and '.join(want_attrs)} {category} with {opt_text}, "
        f"and price lower than {max_price:.2f} dollars"
    )
    goal = ShopGoal(instruction, category, want_attrs, want_opts, max_price)
    all_opts = tuple((k, tuple(v)) for k, v in sorted(options.items()))
    products: list[Product] = []
    kinds = ["match"] + [
        rng.choice(["attr", "price", "option", "category"]) for _ in range(n_products - 1)
    ]
    rng.shuffle(kinds)
    for i, kind in enumerate(kinds):
        asin = f"B0{seed % 100:02d}{i:02d}{rng.choice('ABCDEFGH')}"
        cat = category
        p_attrs = list(want_attrs) + rng.sample([a for a in attrs if a not in want_attrs], 1)
        price = round(rng.uniform(max_price * 0.4, max_price * 0.95), 2)
        p_opts = all_opts
        if kind == "attr":
            p_attrs = [a for a in p_attrs if a != want_attrs[rng.randrange(2)]]
        elif kind == "price":
            price = round(rng.uniform(max_price * 1.1, max_price * 2), 2)
        elif kind == "option":
            k0, v0 = want_opts[0]
            p_opts = tuple(
                (k, tuple(x for x in v if not (k == k0 and x == v0))) for k, v in all_opts
            )
        elif kind == "category":
            cat = rng.choice([c for c in sorted(_CATALOG) if c != category])
        title = f"{rng.choice(['Acme', 'Zenith', 'Nordic', 'Sunny', 'Urban'])} {' '.join(sorted(p_attrs))} {cat}"
        desc = (f"{title}. Features: {', '.join(sorted(p_attrs))}. " + _FILLER * 4).strip()
        products.append(Product(asin, title, price, cat, tuple(sorted(p_attrs)), p_opts, desc))
    return Shop(products, goal, page_size=page_size)
