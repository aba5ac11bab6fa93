//! The policy API group: PodDisruptionBudgets ([`pod_disruption_budget`]).

mod pod_disruption_budget;

pub use pod_disruption_budget::PodDisruptionBudgetHooks;
