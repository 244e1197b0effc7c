"""meshlint's built-in rules, one module each; registered through the `meshlint.rules` entry points."""
