"""Cycle-exact Python golden models, one subpackage per mechanism, named as in ``hw``."""
