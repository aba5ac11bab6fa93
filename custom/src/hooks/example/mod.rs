//! The example resource of `schemas/widget.yaml`: the conversion hooks of its two
//! versions ([`WidgetConversion`]), the worked example of the README.

mod widget;

pub use widget::WidgetConversion;
