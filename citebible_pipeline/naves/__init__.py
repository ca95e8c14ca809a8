"""Nave\x27s Topical Bible: a second, popularity-free human index of topics to passages."""
