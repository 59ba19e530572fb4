"""Exercises that check themselves: one checker per exercise of the tutorial.

Each exercise of ``docs/tutorial/*.md`` has a checker here. Give it the student's
answer, the names the exercise asks for (a machine, a function, a list of mappings, a
verdict, a completion...), and it says right or wrong, and when wrong, why, with a
counterexample: "your map is not injective: a and b both go to 0".

Answers come as a mapping from names to values, or from a file
(:func:`load_answer`): a Python file (``.py``) is run and its top-level names are the
answer; a JSON file (``.json``) holds an object whose keys are the names.
``agentic-machines exercise N FILE`` runs one checker on a file;
``agentic-machines exercise`` lists them all with the names each one wants.

>>> feedback = check("1.3", {"at_most": lambda k: k})
>>> feedback.ok, str(feedback).splitlines()[0]
(True, 'right: one outcome per completion, so at most k (k when every completion goes elsewhere)')
>>> print(check("1.3", {"at_most": lambda k: 2 * k}))
wrong: for k = 1 you say 2, but that is more than one step can reach: count how many outcomes each completion gives
"""

from .checks import EXERCISES, Exercise, Feedback, check, check_file, exercise, load_answer

__all__ = [
    "EXERCISES",
    "Exercise",
    "Feedback",
    "check",
    "check_file",
    "exercise",
    "load_answer",
]
