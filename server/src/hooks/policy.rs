//! LimitRanges, ResourceQuotas and PodDisruptionBudgets.

use kapi_core::Hooks;

use crate::generated::core::v1::LimitRange;
use crate::generated::core::v1::ResourceQuota;
use crate::generated::policy::v1::PodDisruptionBudget;

/// The hooks of LimitRange.
#[derive(Clone, Copy, Debug, Default)]
pub struct LimitRangeHooks;

impl Hooks<LimitRange> for LimitRangeHooks {}

/// The hooks of ResourceQuota.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResourceQuotaHooks;

impl Hooks<ResourceQuota> for ResourceQuotaHooks {}

/// The hooks of PodDisruptionBudget.
#[derive(Clone, Copy, Debug, Default)]
pub struct PodDisruptionBudgetHooks;

impl Hooks<PodDisruptionBudget> for PodDisruptionBudgetHooks {}
