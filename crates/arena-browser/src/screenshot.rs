//! A file's page as a PNG, for places where HTML does not render (a pull request
//! comment): the page opened in a headless Chromium of its own, waited for, captured whole.

use std::path::Path;

/// A full-page PNG of the page in the file `html` once `ready` (a JS expression) holds,
/// from a headless Chromium closed afterwards (`report --screenshot`).
pub async fn screenshot_file(html: &Path, ready: &str) -> anyhow::Result<Vec<u8>> {
    let path = std::fs::canonicalize(html)?;
    let url = format!("file://{}", path.display());
    let browser = crate::Browser::launch(crate::LaunchOptions {
        window: (1280, 900),
        ..Default::default()
    })
    .await?;
    let shot = async {
        let page = browser.new_page(&url, None).await?;
        page.wait_until(ready, std::time::Duration::from_secs(10))
            .await?;
        page.screenshot_png(true).await
    }
    .await;
    browser.close().await?;
    shot
}
