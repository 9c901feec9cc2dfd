"""BigCodeBench tasks using libraries listed as giving objects (`OBJECT_LIBRARIES`: OpenCV, Pillow,
scikit-image, nltk...) run split where their references were measured there (issue 43,
`OBJECT_LIBRARY_MEASURED`), through the real bwrap sandbox: what those references return is data
(OpenCV's and scikit-image's arrays, Pillow images turned into arrays or colour lists, an nltk
`FreqDist`, which crosses as its base type `Counter`).

One task per moved class, each with its controls (the reference passes in the split mode and in the
shared mode, a wrong answer fails in both) and forgeries by a wrong answer: each passes in the shared
mode (forced: the residual of the tasks that stay there, docs/security.md) and fails in the split
mode. A task runs where the test's Python has its library; run from a venv whose `.pth` adds this
machine's packages, the site directories it adds are mounted in the sandbox too.
"""

from __future__ import annotations

import dataclasses

from library_forgeries import battery, library_runner  # noqa: F401 (a fixture of the battery)

from scorers.code_bcb import OBJECT_LIBRARY_MEASURED, BCBProblem, shared_reason


def task(name: str, prompt: str, tests: str, solution: str, libs: tuple[str, ...]) -> BCBProblem:
    return BCBProblem(f"BigCodeBench/{name}", prompt, "", prompt, "import unittest\n" + tests,
                      canonical_solution=solution, libs=libs)  # fmt: skip


CV2 = task(
    "cv2",
    "import cv2\nimport numpy as np\ndef task_func(image):\n",
    """import cv2
import numpy as np
IMAGE = np.zeros((2, 3, 3), dtype=np.uint8)
IMAGE[..., 2] = 255
EXPECTED = cv2.cvtColor(IMAGE, cv2.COLOR_BGR2GRAY)
class TestCases(unittest.TestCase):
    def test_gray(self):
        self.assertTrue(np.array_equal(task_func(IMAGE), EXPECTED))
""",
    "    return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)\n",
    ("cv2", "numpy"),
)
PIL = task(
    "PIL",
    "from PIL import Image\ndef task_func(path):\n",
    """import os
import tempfile
from PIL import Image
EXPECTED = [(4, (255, 0, 0))]
class TestCases(unittest.TestCase):
    def setUp(self):
        self.path = os.path.join(tempfile.mkdtemp(), 'red.png')
        Image.new('RGB', (2, 2), (255, 0, 0)).save(self.path)
    def test_colors(self):
        self.assertEqual(task_func(self.path), EXPECTED)
""",
    "    with Image.open(path) as image:\n        return image.convert('RGB').getcolors()\n",
    ("PIL",),
)
SKIMAGE = task(
    "skimage",
    "import numpy as np\nfrom skimage import color\ndef task_func(image):\n",
    """import numpy as np
from skimage import color
IMAGE = np.full((2, 2, 3), 0.5)
EXPECTED = color.rgb2gray(IMAGE)
class TestCases(unittest.TestCase):
    def test_gray(self):
        np.testing.assert_allclose(task_func(IMAGE), EXPECTED)
""",
    "    return color.rgb2gray(image)\n",
    ("numpy", "skimage"),
)
NLTK = task(
    "nltk",
    "from nltk import FreqDist\nfrom nltk.tokenize import wordpunct_tokenize\ndef task_func(text):\n",
    """EXPECTED = {'a': 2, 'b': 1, '.': 1}
class TestCases(unittest.TestCase):
    def test_counts(self):
        self.assertEqual(task_func('a b a.'), EXPECTED)
""",
    "    return FreqDist(wordpunct_tokenize(text))\n",
    ("nltk",),
)
SYMPY = task(
    "sympy",
    "from sympy import isprime\ndef task_func(numbers):\n",
    """EXPECTED = [2, 3, 5]
class TestCases(unittest.TestCase):
    def test_primes(self):
        self.assertEqual(task_func([1, 2, 3, 4, 5]), EXPECTED)
""",
    "    return [n for n in numbers if isprime(n)]\n",
    ("sympy",),
)
STATSMODELS = task(
    "statsmodels",
    "import numpy as np\nimport statsmodels.api as sm\ndef task_func(x, y):\n",
    """import numpy as np
EXPECTED = [1.0, 2.0]
class TestCases(unittest.TestCase):
    def test_fit(self):
        x = np.arange(5.0)
        self.assertTrue(np.allclose(task_func(x, 1.0 + 2.0 * x), EXPECTED))
""",
    "    return sm.OLS(y, sm.add_constant(x)).fit().params.tolist()\n",
    ("numpy", "statsmodels"),
)
OPENPYXL = task(
    "openpyxl",
    "import openpyxl\ndef task_func(path):\n",
    """import os
import tempfile
import openpyxl
EXPECTED = [['a', 1], ['b', 2]]
class TestCases(unittest.TestCase):
    def setUp(self):
        self.path = os.path.join(tempfile.mkdtemp(), 'rows.xlsx')
        book = openpyxl.Workbook()
        for row in EXPECTED:
            book.active.append(row)
        book.save(self.path)
    def test_rows(self):
        self.assertEqual(task_func(self.path), EXPECTED)
""",
    "    sheet = openpyxl.load_workbook(path).active\n"
    "    return [list(row) for row in sheet.iter_rows(values_only=True)]\n",
    ("openpyxl",),
)
CRYPTOGRAPHY = task(
    "cryptography",
    "from cryptography.fernet import Fernet\ndef task_func(key, message):\n",
    """from cryptography.fernet import Fernet
KEY = Fernet.generate_key()
EXPECTED = 'attack at dawn'
class TestCases(unittest.TestCase):
    def test_round_trip(self):
        self.assertEqual(Fernet(KEY).decrypt(task_func(KEY, EXPECTED)).decode(), EXPECTED)
""",
    "    return Fernet(key).encrypt(message.encode())\n",
    ("cryptography",),
)
BS4 = task(
    "bs4",
    "from bs4 import BeautifulSoup\ndef task_func(html):\n",
    """EXPECTED = ['a', 'b']
class TestCases(unittest.TestCase):
    def test_items(self):
        self.assertEqual(task_func('<ul><li>a</li><li>b</li></ul>'), EXPECTED)
""",
    "    return [li.get_text() for li in BeautifulSoup(html, 'html.parser').find_all('li')]\n",
    ("bs4",),
)
TASKS = {"cv2": CV2, "PIL": PIL, "skimage": SKIMAGE, "nltk": NLTK, "sympy": SYMPY, "statsmodels": STATSMODELS,
         "openpyxl": OPENPYXL, "cryptography": CRYPTOGRAPHY, "bs4": BS4}  # fmt: skip
WRONG = {
    "cv2": "import numpy as np\ndef task_func(image):\n    return image[..., 0]\n",
    "PIL": "def task_func(path):\n    return []\n",
    "skimage": "import numpy as np\ndef task_func(image):\n    return image[..., 0] * 0\n",
    "nltk": "def task_func(text):\n    return {}\n",
    "sympy": "def task_func(numbers):\n    return numbers\n",
    "statsmodels": "def task_func(x, y):\n    return [0.0, 0.0]\n",
    "openpyxl": "def task_func(path):\n    return []\n",
    "cryptography": "def task_func(key, message):\n    return message.encode()\n",
    "bs4": "def task_func(html):\n    return []\n",
}
DISPATCH = """class Liar:
    def __array_function__(self, func, types, args, kwargs):
        return True
    def __array_ufunc__(self, ufunc, method, *args, **kwargs):
        return True
def task_func(*args):
    return Liar()
"""
WILDCARD = """from unittest import mock
class Anything(type(mock.ANY), {base}):
    pass
def task_func(*args):
    return Anything()
"""


def rebind(parameters: str, value: str) -> str:
    """A wrong answer that returns `value` and makes it the test module's expected value."""
    return f"def task_func({parameters}):\n    globals()['EXPECTED'] = {value}\n    return {value}\n"


ATTACKS = {
    ("cv2", "dispatch_hook_decides_the_tests_array_equal"): DISPATCH,
    ("cv2", "rebinds_the_tests_expected_value"): rebind("image", "image[..., 0]"),
    ("PIL", "list_subclass_inheriting_a_library_wildcard"): WILDCARD.format(base="list"),
    ("PIL", "rebinds_the_tests_expected_value"): rebind("path", "[]"),
    ("skimage", "rebinds_the_tests_expected_value"): rebind("image", "image[..., 0] * 0"),
    ("nltk", "dict_subclass_inheriting_a_library_wildcard"): WILDCARD.format(base="dict"),
    ("nltk", "rebinds_the_tests_expected_value"): rebind("text", "{}"),
    ("sympy", "list_subclass_inheriting_a_library_wildcard"): WILDCARD.format(base="list"),
    ("statsmodels", "dispatch_hook_decides_the_tests_allclose"): DISPATCH,
    ("openpyxl", "rebinds_the_tests_expected_value"): rebind("path", "[]"),
    ("cryptography", "rebinds_the_tests_expected_value"): """from cryptography.fernet import Fernet
def task_func(key, message):
    globals()['EXPECTED'] = 'wrong'
    return Fernet(key).encrypt(b'wrong')
""",
    ("bs4", "rebinds_the_tests_expected_value"): rebind("html", "[]"),
}


def test_only_measured_object_library_tasks_run_apart_from_the_answer():
    """Read from the task only, no library needed: a task using an object library stays shared unless
    its id was measured; a measured id runs split, and the other reasons still apply to it."""
    for name, problem in TASKS.items():
        assert shared_reason(problem) == f"uses libraries whose values are objects ({name})"
        measured = dataclasses.replace(problem, task_id="BigCodeBench/214")
        assert "BigCodeBench/214" in OBJECT_LIBRARY_MEASURED and shared_reason(measured) is None
    patched = dataclasses.replace(CV2, task_id="BigCodeBench/214", test=CV2.test + "from unittest import mock\n")
    assert shared_reason(patched) == "patches the answer's modules (not measured in the split mode)"


(
    test_control_the_reference_passes,
    test_control_the_wrong_answer_fails,
    test_forgery_passes_in_the_shared_mode_and_fails_split,
) = battery(TASKS, WRONG, ATTACKS)
