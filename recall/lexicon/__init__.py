"""English word meaning without a model: WordNet 3.0 tables committed with the code (``wordnet``)."""
