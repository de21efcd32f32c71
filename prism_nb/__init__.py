__version__ = "0.1.0"
# Importing the package registers every method (PRISM included), every task (HAR-C and its variants,
# the clinical datasets) and every condition, whichever module a user imports first: the task layer
# only, no analysis and no plotting library. Written by hand: nbdev only updates the version above.
from . import harc as _harc, harc_tasks as _harc_tasks, prism as _prism  # noqa: F401
from . import realworld as _realworld  # noqa: F401
