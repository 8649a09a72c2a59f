"""Safety-Gymnasium's navigation tasks in JAX: robots, layouts, lidar and costs."""
