//! Scenario tests of the updater.
