"""Training: the config, the learner and the compiled trainer, the Gymnasium trainer, run directories, the in-program
sweep, loggers and provenance."""
