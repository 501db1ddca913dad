// Placeholder: being written (issue 8).
