"""One base class for errors a user can fix (model/errors.py): the hooks and the CLI
catch `UserError` alone, so every such error must derive from it."""
from __future__ import annotations

import pytest

from model.errors import UserError
from livenumbers.charts import ChartError
from livenumbers.lock import LockError
from livenumbers.notebook import NotebookError
from livenumbers.formats import NumberError
from livenumbers.markup import PageError
from model.study import StudyError
from model.tokenize import TokenizeError
from model.weights import WeightsError


@pytest.mark.parametrize("error", [StudyError, TokenizeError, WeightsError, NumberError, PageError, LockError,
                                   ChartError, NotebookError])
def test_every_error_a_user_can_fix_is_a_user_error(error):
    assert issubclass(error, UserError)


def test_the_message_is_the_message():
    # KeyError quotes its argument; a NumberError must read like the others.
    assert str(NumberError("unknown number 'x'")) == "unknown number 'x'"
    assert str(StudyError("docs/corpus.tsv:3: empty line")) == "docs/corpus.tsv:3: empty line"

