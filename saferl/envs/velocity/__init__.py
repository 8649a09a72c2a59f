"""Safety-Gymnasium's velocity tasks: the locomotion family and its MuJoCo physics."""
