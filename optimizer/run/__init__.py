"""One run's machinery: its settings, the open harness, one episode, one candidate's evaluation."""
