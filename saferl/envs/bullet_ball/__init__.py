"""Bullet-Safety-Gym's ball tasks in JAX: the ball's physics and its four tasks."""
