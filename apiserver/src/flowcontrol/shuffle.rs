//! Shuffle sharding: a flow's hash dealt into a hand of distinct queue indices, as kube's
//! `k8s.io/apiserver/pkg/util/shufflesharding/shufflesharding.go` deals it (the hash
//! read as a mixed-radix number whose digits pick cards from a shrinking deck).
//!
//! Difference from kube: the flow's hash. kube takes the first 8 bytes (little endian)
//! of SHA-256 over `schema name, 0, distinguisher` (`hashFlowID`); this module takes
//! 64-bit FNV-1a over the same bytes, finished by SplitMix64's mixer so the high bits
//! are as well spread as the low ones. Both are stable; which queues a flow is dealt
//! is not visible outside the server, and no crate is added for SHA-256.

/// A flow: the FlowSchema that matched and the distinguisher within it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FlowKey {
    /// The FlowSchema's name.
    pub flow_schema: String,
    /// The flow distinguisher (user name, namespace, or empty).
    pub distinguisher: String,
}

impl FlowKey {
    /// The flow of `flow_schema` and `distinguisher`.
    pub fn new(flow_schema: impl Into<String>, distinguisher: impl Into<String>) -> Self {
        Self {
            flow_schema: flow_schema.into(),
            distinguisher: distinguisher.into(),
        }
    }

    /// The flow's stable 64-bit hash.
    pub fn hash(&self) -> u64 {
        const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
        const PRIME: u64 = 0x0000_0100_0000_01b3;
        let bytes = self
            .flow_schema
            .as_bytes()
            .iter()
            .chain(&[0u8])
            .chain(self.distinguisher.as_bytes());
        let fnv = bytes.fold(OFFSET, |h, b| (h ^ u64::from(*b)).wrapping_mul(PRIME));
        mix(fnv)
    }
}

/// SplitMix64's finalizer.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Deals `hand_size` distinct indices below `deck_size` from `hash`. `hand_size` is
/// at most `deck_size` (the caller clamps it).
pub fn deal(mut hash: u64, deck_size: usize, hand_size: usize) -> Vec<usize> {
    let hand_size = hand_size.min(deck_size);
    // Digit i is below deck_size - i: a position in what is left of the deck.
    let digits: Vec<usize> = (0..hand_size)
        .map(|i| {
            let radix = (deck_size - i) as u64;
            let digit = hash % radix;
            hash /= radix;
            digit as usize
        })
        .collect();
    // Turn positions in the shrinking deck into cards of the whole one: each earlier
    // digit at or below the card, looked at from the latest back, pushes it up one.
    (0..hand_size)
        .map(|i| {
            digits[..i].iter().rev().fold(digits[i], |card, &earlier| {
                card + usize::from(card >= earlier)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_are_distinct_and_in_the_deck() {
        for (deck, hand) in [(64, 8), (128, 6), (16, 4), (5, 5), (1, 1)] {
            for n in 0..2000u64 {
                let mut cards = deal(mix(n), deck, hand);
                assert_eq!(cards.len(), hand);
                assert!(cards.iter().all(|&c| c < deck));
                cards.sort_unstable();
                cards.dedup();
                assert_eq!(cards.len(), hand, "deck {deck} hand {hand} hash {n}");
            }
        }
    }

    #[test]
    fn deals_as_kube_deals() {
        // Digits of 7 in radixes 4, 3: 3, then 1 → cards 3, then 1 (below 3).
        assert_eq!(deal(7, 4, 2), [3, 1]);
        // Digits 0, 0, 0 → cards 0, 1, 2.
        assert_eq!(deal(0, 4, 3), [0, 1, 2]);
    }

    #[test]
    fn flow_hash_is_stable_and_separates() {
        let a = FlowKey::new("global-default", "jane");
        assert_eq!(a.hash(), FlowKey::new("global-default", "jane").hash());
        assert_ne!(a.hash(), FlowKey::new("global-defaultj", "ane").hash());
        assert_ne!(a.hash(), FlowKey::new("global-default", "john").hash());
    }
}
