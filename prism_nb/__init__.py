__version__ = "0.1.0"
# Importing the package registers every method (PRISM included) and every task (HAR-C, the clinical
# datasets), whichever module a user imports first. Written by hand: nbdev only updates the
# version above.
from . import harc as _harc, prism as _prism, realworld as _realworld  # noqa: F401
from . import analysis as _analysis, paper_severity as _paper_severity  # noqa: F401
from . import tuning as _tuning  # noqa: F401
from . import bunching as _bunching  # noqa: F401  (registers harc_mend)
from . import verdict as _verdict  # noqa: F401  (registers harc_fresh)
