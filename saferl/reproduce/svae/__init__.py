"""SVAE's experiments: Tables 1-3, Fig. 6 and the App. H.6 tuning."""
