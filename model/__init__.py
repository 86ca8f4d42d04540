"""The attention instrument's model and measurements. No MkDocs in here.

- weights:     load a checkpoint (Hugging Face folder or ONNX) into NumPy arrays
- tokenize:    WordPiece via `tokenizers`, with word ids
- encoder:     the PyTorch reference forward pass (alpha, v, f per layer and head)
- oracle:      the independent NumPy float64 forward pass
- activations: the arrays the measurements read, from either implementation
- instrument:  what a displayed row is (lenses, words, sink share, head choice)
- corpus:      the corpus as one model sees it, and its displayed rows (the head rule applied)
- measure:     the measurements over the corpus; rollout, flip: the series' others
- study:       docs/study.yml and the corpus
- results:     one results dict with provenance; the cache key
"""
