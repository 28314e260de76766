//! Test doubles: what `cairn test` puts in place of the providers a run
//! starts, for its `mock_provider`, `override_resource` and `override_data`
//! blocks. The engine only asks; what a double does is the test runner's.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::diag::Diagnostic;
use crate::plan::Providers;
use crate::provider::Provider;

/// Stand-ins for a run's providers.
pub trait Doubles: Send + Sync {
    /// Whether provider `name` (a configuration name: `aws`, `aws.west`) is
    /// mocked: it is then never configured or called, and
    /// [`Doubles::provider`] answers for it alone.
    fn mocks(&self, name: &str) -> bool;

    /// The provider the run uses as `name`: `real` is the one started for
    /// it, `None` when it is mocked.
    fn provider(&self, name: &str, real: Option<Arc<dyn Provider>>) -> Result<Arc<dyn Provider>, Diagnostic>;
}

/// The names of `names` that `doubles` mocks, taken out of `names`.
pub(super) fn take_mocked(doubles: &dyn Doubles, names: &mut BTreeSet<String>) -> BTreeSet<String> {
    let mocked: BTreeSet<String> = names.iter().filter(|n| doubles.mocks(n)).cloned().collect();
    names.retain(|n| !mocked.contains(n));
    mocked
}

/// `started` with each provider replaced by its double, and the `mocked`
/// ones added.
pub(super) fn substitute(
    doubles: &dyn Doubles,
    started: Providers,
    mocked: &BTreeSet<String>,
) -> Result<Providers, Vec<Diagnostic>> {
    let mut providers = Providers::new();
    let mut errors = Vec::new();
    let wanted = started.into_iter().map(|(n, p)| (n, Some(p))).chain(mocked.iter().map(|n| (n.clone(), None)));
    for (name, real) in wanted {
        match doubles.provider(&name, real) {
            Ok(p) => {
                providers.insert(name, p);
            }
            Err(d) => errors.push(d),
        }
    }
    if errors.is_empty() { Ok(providers) } else { Err(errors) }
}
