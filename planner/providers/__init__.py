"""Cloud provider adapters: live specs and prices into the common offer table (refresh path only)."""
