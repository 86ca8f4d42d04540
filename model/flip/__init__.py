"""The adjective flip: Winograd-style minimal pairs, and whether any head follows the reader.

In each pair the two sentences differ in one word after the pronoun, and a reader's
referent for the pronoun flips from one candidate noun to the other. One concept a module:

- `records`:  what the flip publishes: a pair, a head's tests, a lens, a set, the null check;
- `measure`:  the pairs through the model: each head's winner and shift, the model's own pick;
- `analysis`: rates over (pair, head) with intervals over pairs, as a whole and within each
              order, and the heads that pass counted on the null pairs;
- `heads`:    the per-head sign tests, Bonferroni, and the null of the largest follow count.

Not here: reading and checking the pairs (model/study/pairs.py). The names callers use are
re-exported here.
"""
from .measure import measure_pairs
from .records import FlipResults
