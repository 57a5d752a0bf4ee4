"""``python -m hhe_gen``: the same as the ``hhe-gen`` command."""

import sys

from hhe_gen.apps.cli import main

sys.exit(main())
