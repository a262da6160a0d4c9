"""What a run costs: prices, the spending limit, the estimate before a run, earlier runs' shapes."""
