//! Reads the op options of a graph or plan file: [`rt::OpOptions`] is serialised internally
//! tagged (`{"kind": "conv2d", ...}`), and reading that form back buffers the fields, which
//! the allocation-free runtime cannot do. This mirror of the enum, built from the runtime's
//! own list of kinds, reads it with serde's derive and converts.

use serde::{Deserialize, Deserializer};

use planner_rt::options as rt;

/// Declares the mirror of [`rt::OpOptions`] and its conversion, from the list of kinds.
macro_rules! mirror {
    ($($(#[$doc:meta])* $variant:ident = $opcode:literal, $ty:ident, $method:ident, $missing:literal;)*) => {
        /// The mirror; named like the runtime's enum so that serde's messages read the same.
        #[derive(Deserialize)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        enum OpOptions {
            None,
            $($variant(rt::$ty),)*
        }

        impl From<OpOptions> for rt::OpOptions {
            fn from(m: OpOptions) -> rt::OpOptions {
                match m {
                    OpOptions::None => rt::OpOptions::None,
                    $(OpOptions::$variant(o) => rt::OpOptions::$variant(o),)*
                }
            }
        }
    };
}

planner_rt::__op_kinds!(mirror);

/// Reads one [`OpOptions`](planner_rt::options::OpOptions) as the plan file writes it
/// (internally tagged, `{"kind": "conv2d", ...}`); for `#[serde(deserialize_with = ...)]` on
/// a field of that type, as [`OpEntry::options`](crate::OpEntry::options) has.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<rt::OpOptions, D::Error> {
    OpOptions::deserialize(d).map(rt::OpOptions::from)
}

#[cfg(test)]
mod tests {
    use super::deserialize;
    use planner_rt::options::{Conv2dOptions, Dims, MeanOptions, OpOptions, Padding};

    fn read(text: &str) -> serde_json::Result<OpOptions> {
        deserialize(&mut serde_json::Deserializer::from_str(text))
    }

    #[test]
    fn options_read_back() {
        let o = OpOptions::Conv2d(Conv2dOptions {
            padding: Padding::Valid,
            stride_w: 2,
            ..Conv2dOptions::default()
        });
        assert_eq!(read(&serde_json::to_string(&o).unwrap()).unwrap(), o);
        let m = OpOptions::Mean(MeanOptions {
            axes: Dims::new(&[1, 2]).unwrap(),
            keep_dims: true,
        });
        assert_eq!(read(&serde_json::to_string(&m).unwrap()).unwrap(), m);
        let err = read(r#"{"kind":"mean","axes":[0,0,0,0,0,0,0,0,0],"keep_dims":true}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a list of 9 integers where at most 8 fit"),
            "{err}"
        );
        assert_eq!(read(r#"{"kind":"none"}"#).unwrap(), OpOptions::None);
        let err = read(r#"{"kind":"conv9"}"#).unwrap_err().to_string();
        assert!(err.contains("unknown variant `conv9`"), "{err}");
        // The tag may come after the fields, as with serde's own derive.
        let late = r#"{"beta":1.0,"kind":"softmax"}"#;
        assert_eq!(read(late).unwrap().opcode(), Some("SOFTMAX"));
    }
}
