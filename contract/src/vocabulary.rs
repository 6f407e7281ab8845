//! `vocabulary!`: an enum whose every variant has a name (as it is stored, sent
//! and read back) and a description (for the person or model reading it), with
//! `ALL`, `NAMES`, `name`, `description` and `parse` generated from that one
//! statement. Path parameters and send states are declared with it; a relation
//! adds the kind of object it is held on, so it has a declaration of its own.

/// Declares a vocabulary: `Variant = "name": "description";` for each word.
macro_rules! vocabulary {
    (
        $(#[$meta:meta])*
        $visibility:vis enum $enum:ident {
            $($variant:ident = $name:literal : $description:literal;)*
        }
    ) => {
        $(#[$meta])*
        $visibility enum $enum {
            $(#[doc = $description] $variant,)*
        }

        impl $enum {
            /// Every word, in declaration order.
            pub const ALL: &'static [$enum] = &[$($enum::$variant,)*];
            /// Every word's name, in the same order.
            pub const NAMES: &'static [&'static str] = &[$($name,)*];

            /// The word's name, as it is stored, sent and read back.
            pub fn name(self) -> &'static str {
                match self { $($enum::$variant => $name,)* }
            }

            /// What the word means, for a reader.
            pub fn description(self) -> &'static str {
                match self { $($enum::$variant => $description,)* }
            }

            /// The word a name names, if any.
            pub fn parse(name: &str) -> Option<$enum> {
                $enum::ALL.iter().copied().find(|word| word.name() == name)
            }
        }
    };
}

pub(crate) use vocabulary;
