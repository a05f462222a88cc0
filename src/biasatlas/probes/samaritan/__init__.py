"""Control-baseline ratings ("The Biased Samaritan")."""
