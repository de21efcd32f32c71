"A worked prism_nb plugin: importing it registers a method, a condition, a backbone and a task."
# relative imports, so that the package also loads as a folder (`plugins=[<this folder>]`)
from . import method, condition, backbone, task  # noqa: F401  (imported for their registrations)
