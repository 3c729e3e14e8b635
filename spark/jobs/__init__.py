"""Example Spark jobs: ``pipeline`` ingests, evolves and time-travels a table."""
