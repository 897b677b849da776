"""Framework importers: each lowers a framework's model into the `nn` dialect."""
