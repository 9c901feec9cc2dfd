import sys

from regression.cli import main

sys.exit(main())
