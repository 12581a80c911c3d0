"""Results cached by content (issue 20, item 2): filled in by the main-job work."""
