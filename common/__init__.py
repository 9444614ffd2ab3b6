"""Small leaf modules that both programs need, each named for its content."""
