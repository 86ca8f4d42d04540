"""The study's inputs: `docs/study.yml` (fixed in advance), the corpus and the flip pairs it
names. Errors name the file and, where there is one, the line, and say what to fix.

- `files`:    the text files: one sentence a line, the corpus's `register<TAB>sentence`, YAML;
- `pairs`:    the flip pairs and the null pairs, read and checked;
- `schema`:   what a study is (`Study`, and a frozen dataclass for each of its sections);
- `parse`:    study.yml read into a `Study` (`load`), every setting checked;
- `variants`: the same study on fewer models, on your own sentences, on another corpus.

Not here: anything measured on those inputs (model/measure.py and the rooms it calls).
The names callers use are re-exported here.
"""
from .files import StudyError, read_corpus, read_sentences
from .pairs import ORDERS, FlipPair
from .parse import load
from .schema import AnchorSpec, Bootstrap, FlipHeads, Sensitivity, StopRule, Study
from .variants import with_models, with_sentences, with_sentences_of
