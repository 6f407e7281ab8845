//! The `Platform` trait on the Workers runtime: `Date.now()`, `crypto`
//! (getRandomValues and SubtleCrypto's PBKDF2, which runs natively instead of as
//! slow WASM), timers and the console.

use std::time::Duration;

use js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::core::platform::{Platform, PlatformError};
use crate::core::storage::LocalBoxFuture;

pub struct WorkersPlatform;

fn js_error(context: &str, value: JsValue) -> PlatformError {
    PlatformError(format!("{context}: {value:?}"))
}

fn member(target: &JsValue, name: &str) -> Result<JsValue, PlatformError> {
    Reflect::get(target, &JsValue::from_str(name)).map_err(|error| js_error(name, error))
}

fn method(target: &JsValue, name: &str) -> Result<Function, PlatformError> {
    member(target, name)?.dyn_into::<Function>().map_err(|error| js_error(name, error))
}

async fn call(target: &JsValue, name: &str, arguments: &Array) -> Result<JsValue, PlatformError> {
    let promise = method(target, name)?.apply(target, arguments).map_err(|error| js_error(name, error))?;
    let promise: Promise = promise.dyn_into().map_err(|error| js_error(name, error))?;
    JsFuture::from(promise).await.map_err(|error| js_error(name, error))
}

async fn web_crypto_pbkdf2(password: &[u8], salt: &[u8], iterations: u32) -> Result<[u8; 32], PlatformError> {
    let crypto = member(&js_sys::global(), "crypto")?;
    let subtle = member(&crypto, "subtle")?;
    let usages = Array::of1(&JsValue::from_str("deriveBits"));
    let import_arguments = Array::of5(
        &JsValue::from_str("raw"),
        &Uint8Array::from(password),
        &JsValue::from_str("PBKDF2"),
        &JsValue::FALSE,
        &usages,
    );
    let key = call(&subtle, "importKey", &import_arguments).await?;
    let algorithm = Object::new();
    let set = |name: &str, value: &JsValue| {
        Reflect::set(&algorithm, &JsValue::from_str(name), value).map_err(|error| js_error(name, error))
    };
    set("name", &JsValue::from_str("PBKDF2"))?;
    set("hash", &JsValue::from_str("SHA-256"))?;
    set("salt", &Uint8Array::from(salt))?;
    set("iterations", &JsValue::from_f64(f64::from(iterations)))?;
    let derive_arguments = Array::of3(&algorithm, &key, &JsValue::from_f64(256.0));
    let bits = call(&subtle, "deriveBits", &derive_arguments).await?;
    let bytes = Uint8Array::new(&bits);
    let mut output = [0u8; 32];
    if bytes.length() != 32 {
        return Err(PlatformError(format!("deriveBits returned {} bytes", bytes.length())));
    }
    bytes.copy_to(&mut output);
    Ok(output)
}

impl Platform for WorkersPlatform {
    fn now_ms(&self) -> i64 {
        js_sys::Date::now() as i64
    }

    fn fill_random(&self, bytes: &mut [u8]) {
        // crypto.getRandomValues fails only above 65,536 bytes; the node asks for
        // at most 32. Should it ever fail, carrying on with predictable bytes
        // would mint guessable credentials, so ending the isolate is the safe answer.
        if let Err(error) = getrandom::fill(bytes) {
            panic!("crypto.getRandomValues failed: {error}");
        }
    }

    fn pbkdf2_sha256<'a>(
        &'a self,
        password: &'a [u8],
        salt: &'a [u8],
        iterations: u32,
    ) -> LocalBoxFuture<'a, Result<[u8; 32], PlatformError>> {
        Box::pin(web_crypto_pbkdf2(password, salt, iterations))
    }

    fn sleep(&self, milliseconds: u32) -> LocalBoxFuture<'_, ()> {
        Box::pin(worker::Delay::from(Duration::from_millis(u64::from(milliseconds))))
    }

    fn log(&self, message: &str) {
        worker::console_error!("{message}");
    }
}
