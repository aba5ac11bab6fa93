//! Authentication: turning a request's credentials into a [`UserInfo`](crate::UserInfo).
